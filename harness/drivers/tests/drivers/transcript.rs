//! `TranscriptTransport`: batches unlocked by written results (D24) and
//! frames held back until a virtual instant.

use serde_json::{json, Map};
use sharedos_drivers::frame::HarnessFrame;
use sharedos_drivers::transcript::{TimedFrame, TranscriptError, TranscriptTransport};
use sharedos_drivers::transport::{HarnessChannel, HarnessTransport, TransportError};
use sharedos_port::signal::{AbortReason, AbortSignal};
use sharedos_testkit::harness_request::harness_request;
use sharedos_testkit::json::object;
use std::time::Duration;
use tokio::time::Instant;

fn call(id: &str) -> HarnessFrame {
    object(json!({"type": "call", "id": id}))
}

async fn open(transport: &TranscriptTransport, id: &str) -> Box<dyn HarnessChannel> {
    transport.open(harness_request(id, "do the thing"), AbortSignal::new()).await.unwrap()
}

async fn read(channel: &dyn HarnessChannel) -> Option<HarnessFrame> {
    channel.read(AbortSignal::new()).await.unwrap()
}

#[test]
fn d24_a_transcript_needs_at_least_one_batch() {
    assert_eq!(TranscriptTransport::new(Vec::new()).unwrap_err(), TranscriptError::NoBatches);
    assert_eq!(TranscriptTransport::from_frames(Vec::new()).unwrap_err(), TranscriptError::NoBatches);
    assert!(TranscriptTransport::from_frames(vec![Vec::new()]).is_ok(), "one empty batch is a transcript");
}

#[tokio::test(start_paused = true)]
async fn d24_batch_one_is_readable_at_open() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a"), call("b")], vec![call("c")]]).unwrap();
    let channel = open(&transport, "t1").await;
    assert_eq!(read(&*channel).await, Some(call("a")));
    assert_eq!(read(&*channel).await, Some(call("b")));
}

#[tokio::test(start_paused = true)]
async fn d24_batch_k_plus_one_is_readable_only_after_k_results() {
    let batches = vec![vec![call("a")], vec![call("b")], vec![call("c")]];
    let transport = TranscriptTransport::from_frames(batches).unwrap();
    let channel = open(&transport, "t1").await;
    assert_eq!(read(&*channel).await, Some(call("a")));
    assert_eq!(read(&*channel).await, None, "batch 2 is locked until one result is written");
    channel.write(object(json!({"result": 1})), AbortSignal::new()).await.unwrap();
    assert_eq!(read(&*channel).await, Some(call("b")));
    assert_eq!(read(&*channel).await, None, "batch 3 needs a second result");
    channel.write(object(json!({"result": 2})), AbortSignal::new()).await.unwrap();
    assert_eq!(read(&*channel).await, Some(call("c")));
}

#[tokio::test(start_paused = true)]
async fn d24_results_written_early_unlock_the_batches_in_turn() {
    let batches = vec![vec![call("a")], vec![call("b")], vec![call("c")]];
    let transport = TranscriptTransport::from_frames(batches).unwrap();
    let channel = open(&transport, "t1").await;
    channel.write(object(json!({"result": 1})), AbortSignal::new()).await.unwrap();
    channel.write(object(json!({"result": 2})), AbortSignal::new()).await.unwrap();
    let frames: Vec<_> = [read(&*channel).await, read(&*channel).await, read(&*channel).await].into();
    assert_eq!(frames, vec![Some(call("a")), Some(call("b")), Some(call("c"))]);
}

#[tokio::test(start_paused = true)]
async fn d24_a_spent_batch_with_no_unlock_reads_as_the_end_of_frames() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a")], vec![call("b")]]).unwrap();
    let channel = open(&transport, "t1").await;
    assert_eq!(read(&*channel).await, Some(call("a")));
    assert_eq!(read(&*channel).await, None);
    assert_eq!(read(&*channel).await, None, "still nothing: the harness waits for a result");
}

#[tokio::test(start_paused = true)]
async fn d24_past_the_last_batch_reads_nothing_whatever_is_written() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a")]]).unwrap();
    let channel = open(&transport, "t1").await;
    assert_eq!(read(&*channel).await, Some(call("a")));
    channel.write(object(json!({"result": 1})), AbortSignal::new()).await.unwrap();
    channel.write(object(json!({"result": 2})), AbortSignal::new()).await.unwrap();
    assert_eq!(read(&*channel).await, None);
}

#[tokio::test(start_paused = true)]
async fn d24_written_and_opened_are_shared_by_every_channel_and_clone() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a")], vec![call("b")]]).unwrap();
    let kept = transport.clone();
    let first = open(&transport, "t1").await;
    let second = open(&transport, "t2").await;
    first.write(object(json!({"result": "first"})), AbortSignal::new()).await.unwrap();
    second.write(object(json!({"result": "second"})), AbortSignal::new()).await.unwrap();
    assert_eq!(kept.written(), vec![object(json!({"result": "first"})), object(json!({"result": "second"}))]);
    let opened: Vec<_> = kept.opened().into_iter().map(|r| r.execution_id).collect();
    assert_eq!(opened, vec!["t1", "t2"]);
    assert_eq!(kept.opened()[0], harness_request("t1", "do the thing"), "the request is recorded whole");
}

#[tokio::test(start_paused = true)]
async fn d24_each_channel_reads_the_batches_from_the_start_as_copies() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a")]]).unwrap();
    let first = open(&transport, "t1").await;
    let mut taken = read(&*first).await.unwrap();
    taken.insert("mutated".to_string(), json!(true));
    let second = open(&transport, "t2").await;
    assert_eq!(read(&*second).await, Some(call("a")), "a reader's changes never reach the transcript");
    assert_eq!(transport.batches()[0][0].frame, call("a"));
}

#[tokio::test(start_paused = true)]
async fn d24_close_does_nothing_to_the_transcript() {
    let transport = TranscriptTransport::from_frames(vec![vec![call("a")]]).unwrap();
    let channel = open(&transport, "t1").await;
    channel.close().await.unwrap();
    channel.close().await.unwrap();
    assert_eq!(read(&*channel).await, Some(call("a")));
}

#[tokio::test(start_paused = true)]
async fn timed_frame_is_held_until_its_virtual_instant() {
    let batches = vec![vec![TimedFrame::now(call("early")), TimedFrame::at(116_000, call("transfer"))]];
    let transport = TranscriptTransport::new(batches).unwrap();
    let start = Instant::now();
    let channel = open(&transport, "t1").await;
    assert_eq!(read(&*channel).await, Some(call("early")));
    assert_eq!(start.elapsed(), Duration::ZERO, "an untimed frame does not wait");
    assert_eq!(read(&*channel).await, Some(call("transfer")));
    assert_eq!(start.elapsed(), Duration::from_millis(116_000), "the seat speaks at 116 s of virtual time");
}

#[tokio::test(start_paused = true)]
async fn timed_frame_counts_from_the_open_not_from_the_read() {
    let transport = TranscriptTransport::new(vec![vec![TimedFrame::at(5_000, call("late"))]]).unwrap();
    let start = Instant::now();
    let channel = open(&transport, "t1").await;
    tokio::time::sleep(Duration::from_millis(8_000)).await;
    assert_eq!(read(&*channel).await, Some(call("late")));
    assert_eq!(start.elapsed(), Duration::from_millis(8_000), "an instant already passed delivers at once");
}

#[tokio::test(start_paused = true)]
async fn timed_frame_wait_rejects_with_the_abort_reason() {
    let transport = TranscriptTransport::new(vec![vec![TimedFrame::at(116_000, call("transfer"))]]).unwrap();
    let channel = open(&transport, "t1").await;
    let signal = AbortSignal::new();
    let aborter = signal.clone();
    let abort = async move {
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        aborter.abort(AbortReason::Timeout);
    };
    let (result, ()) = tokio::join!(channel.read(signal), abort);
    assert_eq!(result, Err(TransportError::Aborted(AbortReason::Timeout)));
    assert_eq!(read(&*channel).await, Some(call("transfer")), "the frame stays for the next read");
}

#[test]
fn timed_frame_reads_and_writes_its_json_shape() {
    let timed: TimedFrame = serde_json::from_value(json!({"atMs": 116_000, "frame": {"type": "call"}})).unwrap();
    assert_eq!(timed, TimedFrame::at(116_000, object(json!({"type": "call"}))));
    let untimed: TimedFrame = serde_json::from_value(json!({"frame": {}})).unwrap();
    assert_eq!(untimed, TimedFrame::now(Map::new()));
    assert_eq!(serde_json::to_value(&untimed).unwrap(), json!({"frame": {}}));
    assert!(serde_json::from_value::<TimedFrame>(json!({"frame": {}, "delay": 3})).is_err(), "unknown keys refused");
}
