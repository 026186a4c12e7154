//! Loopback webhook receivers (a std `TcpListener` on 127.0.0.1:0): each
//! answers every request and hands its body over a channel.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;

use serde_json::Value;

/// A webhook call: its `X-Tmuxd-Signature` and its body.
pub type SignedCall = (Option<String>, Vec<u8>);

/// A webhook receiver: answers `statuses` in turn (then 200), and hands
/// each request's JSON body over the channel. Returns its `/hook` URL.
pub fn webhook(statuses: Vec<u16>) -> (String, mpsc::Receiver<Value>) {
    let mut statuses = statuses.into_iter();
    serve_json(move || {
        let status = statuses.next().unwrap_or(200);
        format!("HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
    })
}

/// A receiver answering each request with `answer()`; each request's JSON
/// body goes over the channel. Returns its `/hook` URL.
pub fn serve_json(
    answer: impl FnMut() -> String + Send + 'static,
) -> (String, mpsc::Receiver<Value>) {
    let (url, raw) = serve(answer);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for (_, body) in raw {
            let _ = tx.send(serde_json::from_slice(&body).unwrap());
        }
    });
    (url, rx)
}

/// A receiver answering 200 that hands over each request's signature
/// header and raw body.
pub fn signed() -> (String, mpsc::Receiver<SignedCall>) {
    serve(|| "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into())
}

/// A receiver answering each request with `answer()`, handing over each
/// request's signature header and raw body. Returns its `/hook` URL.
pub fn serve(
    mut answer: impl FnMut() -> String + Send + 'static,
) -> (String, mpsc::Receiver<SignedCall>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut length, mut signature) = (0, None);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let (name, value) = line.split_once(':').unwrap_or((&line, ""));
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "x-tmuxd-signature" => signature = Some(value.trim().to_owned()),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let _ = stream.write_all(answer().as_bytes());
            let _ = tx.send((signature, body));
        }
    });
    (url, rx)
}
