//! A refusal by the runtime itself (rules version 5). A real CLI never
//! sends a call of a tool its turn does not offer: it tells its model the
//! tool does not exist, and the attack never reaches the envelope. Where
//! the scripted model witnessed that (it asked for the attempt's call
//! under a name the CLI's request did not offer, and the CLI answered that
//! no such tool exists), the attempt was refused at a runtime boundary,
//! and an attack's property holds. Without that evidence it stays
//! unexercised.

use crate::input::script::AttackScript;
use sharedos_scripted_model::witness::WitnessLog;
use std::collections::BTreeMap;

/// The attempts of `turn` the runtime declined itself, by id, each with
/// its evidence in words, read from the turn's `witness`.
#[must_use]
pub fn runtime_refusals(script: &AttackScript, turn: u32, witness: Option<&WitnessLog>) -> BTreeMap<String, String> {
    let Some(witness) = witness else { return BTreeMap::new() };
    // The model asks for the turn's issuable attempts in declared order.
    let issuable = script.attempts.iter().filter(|attempt| attempt.is_issuable(turn));
    issuable
        .enumerate()
        .filter_map(|(index, attempt)| {
            let (request, returned) = witness.declined_as_not_offered(index)?;
            let said: String = returned.text.chars().take(160).collect();
            Some((
                attempt.id.clone(),
                format!(
                    "refused by the runtime before SharedOS: its tool was not offered, and the CLI answered its \\
                     model `{said}` (the scripted model's witness, request {request})"
                ),
            ))
        })
        .collect()
}
