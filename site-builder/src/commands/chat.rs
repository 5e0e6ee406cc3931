//! `site-builder chat`: the answer agent in the terminal.

use std::io::IsTerminal;
use std::path::PathBuf;

use site_builder::search::Searcher;

use super::CommandError;

#[derive(clap::Args)]
pub(crate) struct ChatArgs {
    /// index.bin written by a build (encoder.bin beside it).
    #[arg(long, default_value = "dist/index.bin", value_name = "FILE")]
    index: PathBuf,
    /// Answer extractively even when an LLM is configured.
    #[arg(long)]
    no_llm: bool,
}

pub(crate) fn run_chat(args: ChatArgs) -> Result<(), CommandError> {
    let s = Searcher::open(&args.index, None)?;
    let svc = s.service()?;
    let llm = if args.no_llm { None } else { site_builder::llm::from_env()? };
    let style = site_builder::chat::Style { color: std::io::stdout().is_terminal() };
    let stdin = std::io::stdin();
    site_builder::chat::run(&svc, llm.as_ref(), &mut stdin.lock(), &mut std::io::stdout().lock(), style)
        .map_err(CommandError::Terminal)
}
