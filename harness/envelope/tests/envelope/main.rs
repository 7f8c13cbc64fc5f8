//! Integration tests of `envelope`, in one binary so the suite links once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod annotate;
mod audit;
mod construction;
mod context;
mod deadline;
mod mediation;
mod outage;
mod outcomes;
mod retryable;
mod support;
