//! OPS-1: the README's first command runs the whole flow and narrates it.

#[test]
fn ops_1_demo_runs_the_whole_flow() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_clarion"))
        .arg("demo")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for step in [
        "\"created\":true",
        "\"claimed\":true",
        "\"claimed\":false",
        "[agent] receives the answer\n   -> {\"outcome\":\"answered\"",
        "list -> {\"bundles\":[],\"count\":0,\"next_cursor\":\"\"}",
        "get  -> 404 {\"error\":\"clarification request not found\"}",
        "has_pending_clarification(s-1) = false",
    ] {
        assert!(text.contains(step), "missing {step:?} in:\n{text}");
    }
}
