//! Where one turn is in its life. Two parties move it, and their steps
//! interleave freely: the harness (`run` ends or is stopped, then `finish`
//! writes `closed`) and the runtime (it speaks, sends its ending, and once
//! `run` has ended reports). So each of the harness's phases carries what
//! the runtime has said by then, until the report fixes that for good.
//!
//! | step             | from                           | to                                            |
//! |------------------|--------------------------------|-----------------------------------------------|
//! | `end`            | `Running`, `ClosedEarly`       | `Ended`, `Closed`                             |
//! | `close`          | `Running`, `Ended`, `Reported` | `ClosedEarly`, `Closed`, `Reported` (closed)  |
//! | `report`         | `Closed`                       | `Reported`; refused from any other phase      |
//! | `hear`           | any                            | the same phase, having heard something        |
//! | `receive_ending` | any                            | the same phase, having heard the ending; refused once it has |
//!
//! A step from a phase its row does not name leaves the phase as it is.

use crate::breach::BreachPhase;

/// What the runtime has written about the turn, short of its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Heard {
    /// Nothing yet: a process that exits now exited between turns.
    Nothing,
    /// Something, but not its ending.
    Something,
    /// Its ending (`outcome` or `thrown`).
    Ending,
}

/// Where one turn is, as the serving loop, `run`, its abort guard and
/// `finish` see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TurnPhase {
    /// `run` still waits for the runtime's ending.
    Running(Heard),
    /// `run` returned, or was stopped (and `abort` written); `closed` is
    /// not yet written.
    Ended(Heard),
    /// `closed` was written after `run` ended: a scripted seat owes its
    /// report.
    Closed(Heard),
    /// `closed` was written though `run` never ended: `run` was dropped
    /// while the seat was starting, before anything could mark its end
    /// (or `finish` was called while the turn still ran).
    ClosedEarly(Heard),
    /// The report came: the runtime owes nothing more of the turn. Only
    /// whether `closed` is written can still change.
    Reported {
        /// The runtime had sent its ending before it reported.
        ending: bool,
        /// `closed` was written, before the report or since.
        closed: bool,
    },
}

impl Default for TurnPhase {
    fn default() -> TurnPhase {
        TurnPhase::Running(Heard::Nothing)
    }
}

impl TurnPhase {
    /// The runtime wrote something about the turn.
    #[must_use]
    pub(crate) fn hear(self) -> TurnPhase {
        match self.heard() {
            Some(Heard::Nothing) => self.with_heard(Heard::Something),
            _ => self,
        }
    }

    /// The runtime sent its ending: `None` when it already had, since a
    /// turn has one ending.
    #[must_use]
    pub(crate) fn receive_ending(self) -> Option<TurnPhase> {
        (!self.ending_received()).then(|| self.with_heard(Heard::Ending))
    }

    /// `run` returned or was stopped; a second end changes nothing.
    #[must_use]
    pub(crate) fn end(self) -> TurnPhase {
        match self {
            TurnPhase::Running(heard) => TurnPhase::Ended(heard),
            TurnPhase::ClosedEarly(heard) => TurnPhase::Closed(heard),
            TurnPhase::Ended(_) | TurnPhase::Closed(_) | TurnPhase::Reported { .. } => self,
        }
    }

    /// `closed` was written.
    #[must_use]
    pub(crate) fn close(self) -> TurnPhase {
        match self {
            TurnPhase::Running(heard) => TurnPhase::ClosedEarly(heard),
            TurnPhase::Ended(heard) => TurnPhase::Closed(heard),
            TurnPhase::Reported { ending, .. } => TurnPhase::Reported { ending, closed: true },
            TurnPhase::Closed(_) | TurnPhase::ClosedEarly(_) => self,
        }
    }

    /// The runtime reported: `None` (the report out of order) unless
    /// `run` has ended and `closed` was written since, once.
    #[must_use]
    pub(crate) fn report(self) -> Option<TurnPhase> {
        let ending = self.ending_received();
        match self {
            TurnPhase::Closed(_) => Some(TurnPhase::Reported { ending, closed: true }),
            TurnPhase::Running(_) | TurnPhase::Ended(_) | TurnPhase::ClosedEarly(_) | TurnPhase::Reported { .. } => {
                None
            }
        }
    }

    /// The runtime has written something about the turn.
    #[must_use]
    pub(crate) fn has_heard(self) -> bool {
        self.heard() != Some(Heard::Nothing)
    }

    /// The runtime sent its ending.
    #[must_use]
    pub(crate) fn ending_received(self) -> bool {
        match self {
            TurnPhase::Reported { ending, .. } => ending,
            _ => self.heard() == Some(Heard::Ending),
        }
    }

    /// `run` returned or was stopped: a report is in order from now on.
    #[must_use]
    pub(crate) fn has_ended(self) -> bool {
        matches!(self, TurnPhase::Ended(_) | TurnPhase::Closed(_) | TurnPhase::Reported { .. })
    }

    /// `closed` was written.
    #[must_use]
    pub(crate) fn was_closed(self) -> bool {
        matches!(self, TurnPhase::Closed(_) | TurnPhase::ClosedEarly(_) | TurnPhase::Reported { closed: true, .. })
    }

    /// The runtime reported: a late answer would only reach it amid its
    /// next turn.
    #[must_use]
    pub(crate) fn has_reported(self) -> bool {
        matches!(self, TurnPhase::Reported { .. })
    }

    /// The runtime should still be told the soft signal fired: neither its
    /// ending nor `closed` (which says so too) has made that moot.
    #[must_use]
    pub(crate) fn wants_draining(self) -> bool {
        !(self.ending_received() || self.was_closed())
    }

    /// When, in its turn, a violation now would have happened.
    #[must_use]
    pub(crate) fn breach_phase(self) -> BreachPhase {
        if self.has_reported() {
            BreachPhase::AfterReport
        } else if self.ending_received() {
            BreachPhase::AfterOutcome
        } else {
            BreachPhase::Turn
        }
    }

    /// What the runtime has said, until its report settles it.
    fn heard(self) -> Option<Heard> {
        match self {
            TurnPhase::Running(heard) | TurnPhase::Ended(heard) | TurnPhase::Closed(heard) => Some(heard),
            TurnPhase::ClosedEarly(heard) => Some(heard),
            TurnPhase::Reported { .. } => None,
        }
    }

    fn with_heard(self, heard: Heard) -> TurnPhase {
        match self {
            TurnPhase::Running(_) => TurnPhase::Running(heard),
            TurnPhase::Ended(_) => TurnPhase::Ended(heard),
            TurnPhase::Closed(_) => TurnPhase::Closed(heard),
            TurnPhase::ClosedEarly(_) => TurnPhase::ClosedEarly(heard),
            TurnPhase::Reported { ending, closed } => {
                TurnPhase::Reported { ending: ending || heard == Heard::Ending, closed }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    // Named from the crate root: a path to the parent module would read,
    // to scripts/module-graph.py, as this file importing runtime.rs.
    use crate::breach::BreachPhase;
    use crate::runtime::phase::TurnPhase;

    /// The independent flags the phase replaced, moved as they were: a
    /// reference the phase must agree with after every sequence of steps.
    #[derive(Debug, Default, Clone, Copy)]
    struct Flags {
        heard: bool,
        ending_received: bool,
        ended: bool,
        closed: bool,
        reported: bool,
    }

    /// The steps the runtime code takes; each message is heard first, as
    /// `handle` hears every message before it reads it.
    #[derive(Debug, Clone, Copy)]
    enum Step {
        Message,
        Ending,
        Report,
        End,
        Close,
    }

    const STEPS: [Step; 5] = [Step::Message, Step::Ending, Step::Report, Step::End, Step::Close];

    /// Takes `step` both ways, answering (by the flags, by the phase) what
    /// the caller learns: a second ending, an accepted report, an end
    /// already marked.
    fn take(step: Step, flags: &mut Flags, phase: &mut TurnPhase) -> (bool, bool) {
        if matches!(step, Step::Message | Step::Ending | Step::Report) {
            flags.heard = true;
            *phase = phase.hear();
        }
        match step {
            Step::Message => (false, false),
            Step::Ending => {
                let old = std::mem::replace(&mut flags.ending_received, true);
                let new = phase.receive_ending();
                *phase = new.unwrap_or(*phase);
                (old, new.is_none())
            }
            Step::Report => {
                let old = flags.ended && flags.closed && !flags.reported;
                flags.reported |= old;
                let new = phase.report();
                *phase = new.unwrap_or(*phase);
                (old, new.is_some())
            }
            Step::End => {
                let old = std::mem::replace(&mut flags.ended, true);
                let new = phase.has_ended();
                *phase = phase.end();
                (old, new)
            }
            Step::Close => {
                flags.closed = true;
                *phase = phase.close();
                (false, false)
            }
        }
    }

    fn agree(flags: Flags, phase: TurnPhase) -> bool {
        let breach = if flags.reported {
            BreachPhase::AfterReport
        } else if flags.ending_received {
            BreachPhase::AfterOutcome
        } else {
            BreachPhase::Turn
        };
        phase.has_heard() == flags.heard
            && phase.ending_received() == flags.ending_received
            && phase.has_ended() == flags.ended
            && phase.was_closed() == flags.closed
            && phase.has_reported() == flags.reported
            && phase.wants_draining() != (flags.ending_received || flags.closed)
            && phase.breach_phase() == breach
    }

    /// Every sequence of up to `depth` more steps, from here.
    fn walk(flags: Flags, phase: TurnPhase, depth: usize, trail: &mut Vec<Step>) {
        assert!(agree(flags, phase), "after {trail:?}: {flags:?} vs {phase:?}");
        if depth == 0 {
            return;
        }
        for step in STEPS {
            let (mut next_flags, mut next_phase) = (flags, phase);
            let (by_flags, by_phase) = take(step, &mut next_flags, &mut next_phase);
            trail.push(step);
            assert_eq!(by_flags, by_phase, "answer to {trail:?}");
            walk(next_flags, next_phase, depth - 1, trail);
            trail.pop();
        }
    }

    #[test]
    fn the_phase_answers_as_the_flags_did_after_any_steps() {
        walk(Flags::default(), TurnPhase::default(), 7, &mut Vec::new());
    }

    #[test]
    fn a_report_before_run_ends_is_refused_and_changes_nothing() {
        let early = TurnPhase::default().hear().close();
        assert_eq!(early.report(), None);
        assert_eq!(early.end().report(), Some(TurnPhase::Reported { ending: false, closed: true }));
    }

    /// A report is in order only once `closed` was written: one read
    /// before it, however early the harness read it, is refused.
    #[test]
    fn a_report_before_closed_or_a_second_report_is_refused() {
        let ended = TurnPhase::default().hear().receive_ending().map(TurnPhase::end);
        assert_eq!(ended.and_then(TurnPhase::report), None);
        let reported = ended.map(TurnPhase::close).and_then(TurnPhase::report);
        assert_eq!(reported, Some(TurnPhase::Reported { ending: true, closed: true }));
        assert_eq!(reported.and_then(TurnPhase::report), None);
    }
}
