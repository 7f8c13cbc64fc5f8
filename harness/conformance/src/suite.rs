//! A cell's whole life and a whole run: the orchestrators that call every
//! stage below in turn (input, run, grade, output), and so sit above them;
//! then what a run is held to (`lifecycle`: golden files and committed
//! reports) and how it is told (`event`, rendered by each `reporter`).

pub mod cell;
pub mod event;
pub mod lifecycle;
pub mod matrix;
pub mod report;
pub mod reporter;
