//! `site-builder chat`: the edge function's agent in a terminal, like the advising
//! paper's terminal advisor. The same loop (`search_service::agent`): the ReAct agent
//! over the OpenAI-compatible endpoint from the environment, streamed as it
//! arrives, or the extractive agent when no LLM is configured or the LLM fails.
//! A greeting, the searches it runs, the answer, its sources; `exit` leaves.

use std::io::{BufRead, Read, Write};
use std::time::{Duration, Instant};

use search_service::agent::openai::{Reply, ReplyError};
use search_service::agent::react::{Next, React, ReplyStream, Settings};
use search_service::agent::{extractive, ChatRequest, Done, Event, Message, Role};
use search_service::service::Service;

use crate::llm::{LlmConfig, LlmError};

/// Why one LLM call gave no reply: shown to the operator in the terminal, and
/// the answer falls back to extractive.
#[derive(Debug, thiserror::Error)]
enum CallError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("HTTP {status} from {url}: {preview}")]
    Status { status: u16, url: String, preview: String },
    #[error("reading the LLM's stream: {0}")]
    Stream(#[source] std::io::Error),
    #[error(transparent)]
    Reply(#[from] ReplyError),
}

/// Terminal styling.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    fn dim(&self, s: &str) -> String {
        if self.color {
            format!("\x1b[2m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        if self.color {
            format!("\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
}

/// Runs the conversation until `exit`, `quit` or the end of `input`.
pub fn run(
    svc: &Service,
    llm: Option<&LlmConfig>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    style: Style,
) -> std::io::Result<()> {
    let health = svc.health().map_err(|e| std::io::Error::other(e.to_string()))?;
    let info = &health.index;
    writeln!(out, "{}", style.bold("Knowledge-base assistant"))?;
    writeln!(
        out,
        "I answer from {} pages ({} sections) and cite them. {}",
        info.pages,
        info.chunks,
        match llm {
            Some(c) => format!("Model: {} at {}.", c.model, c.base_url),
            None => "No LLM is configured, so answers are extractive: the sources' own sentences.".into(),
        }
    )?;
    writeln!(out, "Ask a question, or type exit to leave.")?;
    let mut history: Vec<Message> = Vec::new();
    // The blocking client's timeout bounds each step: the answer's first byte,
    // then every read of the stream, so a model that stalls mid-stream for
    // `llm_timeout_secs` is given up on (the loop adds `llm_max_total_secs`).
    let http = match llm {
        Some(c) => Some(
            kb_common::http::blocking_client()
                .connect_timeout(Duration::from_secs(10))
                .timeout(c.timeout)
                .build()
                .map_err(|e| std::io::Error::other(format!("cannot set up the HTTP client: {e}")))?,
        ),
        None => None,
    };
    loop {
        write!(out, "\n{} ", style.bold(">"))?;
        out.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(out)?;
            break;
        }
        let q = line.trim();
        if q.is_empty() {
            continue;
        }
        if matches!(q.to_ascii_lowercase().as_str(), "exit" | "quit" | ":q" | "bye") {
            break;
        }
        history.push(Message { role: Role::User, content: q.to_string() });
        let body = serde_json::json!({ "messages": history });
        let req = match ChatRequest::parse(body.to_string().as_bytes()) {
            Ok(r) => r,
            Err(e) => {
                writeln!(out, "{}", style.dim(&format!("({e})")))?;
                history.pop();
                continue;
            }
        };
        let start = Instant::now();
        let clock = move || start.elapsed().as_secs_f64() * 1e3;
        let mut printer = Printer { out: &mut *out, style, error: None };
        let done = match (llm, &http) {
            (Some(c), Some(a)) => react(svc, c, a, &req, &clock, &mut printer),
            _ => {
                extractive::answer(svc, &req, &extractive::Config::default(), false, &clock, &mut |e| printer.event(e))
            }
        };
        if let Some(e) = printer.error.take() {
            return Err(e);
        }
        history.push(Message { role: Role::Assistant, content: done.answer });
    }
    writeln!(out, "Goodbye.")?;
    Ok(())
}

/// Prints events as they come; remembers the first write error.
struct Printer<'o> {
    out: &'o mut dyn Write,
    style: Style,
    error: Option<std::io::Error>,
}

impl Printer<'_> {
    fn event(&mut self, e: Event) {
        let r = self.print(&e);
        if let (Err(err), None) = (r, &self.error) {
            self.error = Some(err);
        }
    }

    fn print(&mut self, e: &Event) -> std::io::Result<()> {
        let s = self.style;
        match e {
            Event::Search(step) => {
                writeln!(self.out, "{}", s.dim(&format!("  searched: {} ({} results)", step.query, step.hits.len())))?
            }
            Event::Sources { .. } => writeln!(self.out)?,
            Event::Token { text } => {
                write!(self.out, "{text}")?;
                self.out.flush()?;
            }
            Event::Error { message } => writeln!(self.out, "{}", s.dim(&format!("  ({message})")))?,
            Event::Done(d) => {
                if !d.answer.ends_with('\n') {
                    writeln!(self.out)?;
                }
                let mut notes = Vec::new();
                if d.extractive {
                    notes.push("extractive answer");
                }
                if d.degraded {
                    notes.push("the LLM failed");
                }
                if d.abstained {
                    notes.push("not in the knowledge base");
                }
                if !d.citations.is_empty() {
                    writeln!(self.out, "\n{}", s.bold("Sources"))?;
                    for c in &d.citations {
                        writeln!(self.out, "  [{}] {} — {}", c.n, c.path.join(" / "), c.url)?;
                    }
                }
                if !notes.is_empty() {
                    writeln!(self.out, "{}", s.dim(&format!("({})", notes.join("; "))))?;
                }
            }
        }
        Ok(())
    }
}

/// The ReAct loop with a blocking client, streaming tokens to the terminal.
fn react(
    svc: &Service,
    llm: &LlmConfig,
    http: &reqwest::blocking::Client,
    req: &ChatRequest,
    clock: &dyn Fn() -> f64,
    printer: &mut Printer,
) -> Done {
    let mut react = React::new(svc, Settings::new(&llm.model), req, true, clock());
    let mut body = react.request();
    // The same budget as the edge function's (`llm_max_total_secs`): past it, no
    // further LLM call, and the answer is extractive.
    let end_ms = clock() + llm.max_total.as_secs_f64() * 1e3;
    loop {
        if clock() >= end_ms {
            let why = format!("the LLM calls took longer than llm_max_total_secs ({} s)", llm.max_total.as_secs_f64());
            printer.event(Event::Error { message: why.clone() });
            return react.degrade(&why, clock, &mut |e| printer.event(e));
        }
        let t = clock();
        let reply = call(llm, http, &body, &mut react, printer);
        let next = match reply {
            Ok(reply) => react.on_reply(reply, clock() - t, clock, &mut |e| printer.event(e)),
            Err(why) => {
                // In a terminal the reader is the operator: the details are
                // theirs to see (the public stream gets only the generic line).
                let why = why.to_string();
                printer.event(Event::Error { message: format!("the LLM failed: {why}") });
                return react.degrade(&why, clock, &mut |e| printer.event(e));
            }
        };
        match next {
            Next::Call(b) => body = b,
            Next::Done(d) => return d,
        }
    }
}

fn call(
    llm: &LlmConfig,
    http: &reqwest::blocking::Client,
    body: &serde_json::Value,
    react: &mut React,
    printer: &mut Printer,
) -> Result<Reply, CallError> {
    let mut resp = crate::llm::post(llm, http, body)?;
    let status = resp.status();
    if !status.is_success() {
        let text = resp.text().unwrap_or_default();
        return Err(CallError::Status {
            status: status.as_u16(),
            url: llm.completions_url(),
            preview: text.chars().take(200).collect(),
        });
    }
    let mut stream = ReplyStream::default();
    let mut buf = [0u8; 4096];
    let mut show = |text: String| {
        if let Some(e) = react.sources_event() {
            printer.event(e);
        }
        printer.event(Event::Token { text });
    };
    loop {
        let n = resp.read(&mut buf).map_err(CallError::Stream)?;
        if n == 0 {
            break;
        }
        if let Some(text) = stream.push(&buf[..n])? {
            show(text);
        }
    }
    let (reply, rest) = stream.finish()?;
    if let Some(text) = rest {
        show(text);
    }
    Ok(reply)
}
