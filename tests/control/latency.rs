//! Time per command over control mode against a forked `tmux`, printed for
//! the record (run with `--nocapture`); only the order of magnitude is
//! asserted.

use super::*;

fn median_and_p99(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() * 99 / 100]),
    )
}

#[tokio::test]
async fn control_mode_commands_cost_far_less_than_a_fork() {
    let server = TmuxServer::new();
    server.new_shell("lat");
    let tmux = tmux_for(&server);
    let pane = pane_of(&server, "lat");
    let mut client = attach(&tmux, "lat").await;
    let command = DisplayMessage {
        target: Some(Target::Pane(pane)),
        format: "#{pane_id} #{cursor_x},#{cursor_y}".into(),
    };
    let mut control = Vec::new();
    for _ in 0..500 {
        let start = Instant::now();
        client.run(&command).await.unwrap();
        control.push(start.elapsed());
    }
    let capture = CapturePane {
        target: Target::Pane(pane),
        escapes: true,
        join: true,
        start: None,
        end: None,
    };
    let mut control_capture = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        client.run(&capture).await.unwrap();
        control_capture.push(start.elapsed());
    }
    let mut forked = Vec::new();
    for _ in 0..50 {
        let start = Instant::now();
        tmux.run_cmd(&command).await.unwrap();
        forked.push(start.elapsed());
    }
    let (control, forked) = (median_and_p99(control), median_and_p99(forked));
    let control_capture = median_and_p99(control_capture);
    eprintln!(
        "display-message: control p50 {:.3} ms p99 {:.3} ms; fork p50 {:.3} ms p99 {:.3} ms; \
         capture-pane -e -J over control p50 {:.3} ms p99 {:.3} ms",
        control.0, control.1, forked.0, forked.1, control_capture.0, control_capture.1
    );
    assert!(
        control.0 < forked.0,
        "control {control:?} vs fork {forked:?}"
    );
    client.close().await;
}
