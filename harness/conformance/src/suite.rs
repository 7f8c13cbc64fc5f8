//! A cell's whole life and a whole run: the orchestrators that call every
//! stage below in turn (input, run, grade, output), and so sit above them.

pub mod cell;
pub mod matrix;
pub mod report;
