//! A stream read as it comes equals the stream read whole, line numbers,
//! steps, outcome and ignored counts alike; only a line over the cap
//! differs, counted `oversized` and skipped.

use proptest::prelude::*;
use sharedos_drivers::codec::codex::CodexLiveReader;
use sharedos_drivers::live::{read_stream, read_stream_from, IgnoredKind};

const COMPLETED: &str = "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}";

proptest! {
    #[test]
    fn read_as_it_comes_equals_read_whole(
        lines in proptest::collection::vec(prop_oneof![
            Just(COMPLETED.to_string()),
            Just(String::new()),
            Just("not json\r".to_string()),
            Just("[1]".to_string()),
            "[ -~]{0,40}",
        ], 0..12),
        end_with_newline in any::<bool>(),
    ) {
        let mut text = lines.join("\n");
        if end_with_newline && !text.is_empty() {
            text.push('\n');
        }
        let whole = read_stream(&mut CodexLiveReader::default(), &text);
        let streamed = read_stream_from(&mut CodexLiveReader::default(), text.as_bytes(), 1 << 20).unwrap();
        prop_assert_eq!(whole, streamed);
    }
}

#[test]
fn a_line_over_the_cap_is_counted_oversized_and_the_next_line_keeps_its_number() {
    let text = format!("{}\n{COMPLETED}\n", "y".repeat(100));
    let reading = read_stream_from(&mut CodexLiveReader::default(), text.as_bytes(), 90).unwrap();
    assert_eq!(reading.ignored.get(&IgnoredKind::Oversized), Some(&1));
    assert_eq!(reading.ignored.len(), 1, "{:?}", reading.ignored);
    let outcome = serde_json::to_value(&reading.outcome).unwrap();
    assert_eq!(outcome["line"], 2, "{outcome}");
}
