//! `snapsat tcg`: guided test-case generation for one method of a small program.

use crate::failure::{say, Failure, Result};
use crate::output::{check_outputs, print, write_atomically};
use crate::read_text;
use clap::Args;
use snapsat::budget::Budget;
use snapsat::solver::Splr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct TcgArgs {
    /// Program in snapsat's small Java-like language (see examples/tcg/).
    program: PathBuf,
    /// The method under test.
    #[arg(short, long)]
    method: String,
    /// Most iterations of each loop, and recursive calls of each method, on a path.
    #[arg(short = 'k', long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..1001))]
    loop_k: u64,
    /// Which paths to ask for: those of the method under test itself (callees free, the
    /// seed's criterion), or every path through it and its callees.
    #[arg(long, default_value = "all-local-paths",
          value_parser = crate::flags::named::<snapsat::tcg::Criterion>(&snapsat::tcg::Criterion::NAMES))]
    criterion: snapsat::tcg::Criterion,
    /// Bits of an int: 32 is Java's; smaller widths solve faster.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(2..=64))]
    width: u32,
    /// Most traces, or paths, either generator considers.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    limit: u64,
    /// Write the report as JSON to standard output instead of text.
    #[arg(long)]
    json: bool,
    /// Stop after this many seconds (or at SIGINT), reporting what was found by then.
    #[arg(short = 't', long, value_name = "SECONDS", default_value_t = 600.0)]
    time_limit: f64,
    /// Write the guided tests' path constraints as one CNF (a selector variable a path,
    /// `c ind` over the input bits) for `snapsat sample`.
    #[arg(long, value_name = "FILE")]
    emit_cnf: Option<PathBuf>,
}

/// Stack for the TCG passes, which walk programs recursively (nesting is bounded by
/// `tcg::lang::MAX_NESTING`; this leaves room for every pass at that depth).
const TCG_STACK_BYTES: usize = 512 << 20;

pub fn run(args: TcgArgs) -> Result<ExitCode> {
    let worker = std::thread::Builder::new()
        .stack_size(TCG_STACK_BYTES)
        .spawn(move || generate(args))
        .map_err(|e| anyhow::anyhow!("cannot start the TCG thread: {e}"))?;
    worker
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn generate(args: TcgArgs) -> Result<ExitCode> {
    use snapsat::tcg;
    let time_limit = crate::flags::time_limit(args.time_limit)?;
    let interrupt = crate::signals::interrupt_on_signals()?;
    let outputs: Vec<(&str, &std::path::Path)> = args
        .emit_cnf
        .iter()
        .map(|p| ("--emit-cnf", p.as_path()))
        .collect();
    check_outputs(&[("program", &args.program)], &outputs)?;
    let source = read_text(&args.program, "the program")?;
    let shown = args.program.display();
    let place = |e: tcg::lang::SyntaxError| Failure::bad_input(anyhow::anyhow!("{shown}: {e}"));
    let program = tcg::lang::parse(&source).map_err(place)?;
    let rules = tcg::rules::translate(&program).map_err(place)?;
    if rules.method_block(&args.method).is_none() {
        let known: Vec<&str> = program.methods.iter().map(|m| m.name.as_str()).collect();
        let has = if known.is_empty() {
            "no methods".to_string()
        } else {
            known.join(", ")
        };
        return Err(Failure::bad_input(anyhow::anyhow!(
            "{shown}: no method `{}`; the program has {has}",
            args.method
        )));
    }
    let config = tcg::TcgConfig {
        method: args.method.clone(),
        loop_k: args.loop_k as usize,
        criterion: args.criterion,
        width: args.width,
        limit: args.limit as usize,
    };
    let budget = Budget::new(time_limit, &interrupt);
    let report = tcg::run(&rules, &config, &Splr, budget).map_err(anyhow::Error::from)?;
    if report.time_limit_reached {
        say!("snapsat: note: the time limit or an interrupt cut the run short; the report holds what was found by then");
    }
    if let Some(path) = &args.emit_cnf {
        let cnf = tcg::emit_cnf(&report.terms, &report.guided.test_cases);
        write_atomically(path, cnf.as_bytes())?;
    }
    if args.json {
        let json = serde_json::to_string_pretty(&report).map_err(anyhow::Error::from)?;
        print(&(json + "\n"))?;
    } else {
        print(&tcg_text(&report))?;
    }
    Ok(if interrupt.load(std::sync::atomic::Ordering::Relaxed) {
        ExitCode::from(crate::failure::status::INTERRUPTED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The TCG report as text.
fn tcg_text(r: &snapsat::tcg::TcgReport) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let criterion = match r.criterion {
        snapsat::tcg::Criterion::AllLocalPaths => "all-local-paths",
        snapsat::tcg::Criterion::AllPaths => "all-paths",
    };
    let _ = writeln!(
        out,
        "method {}: {criterion}, loop-{}, {}-bit ints",
        r.method, r.loop_k, r.width
    );
    let _ = writeln!(
        out,
        "\nrules of {} (block(rule) :- [guards] calls [blocks]):",
        r.method
    );
    for rule in &r.rules {
        let _ = writeln!(out, "  {rule}");
    }
    let sliced = if r.criterion == snapsat::tcg::Criterion::AllLocalPaths {
        "sliced "
    } else {
        ""
    };
    let _ = writeln!(out, "\n{sliced}traces ({}):", r.traces.len());
    for (i, t) in r.traces.iter().enumerate() {
        let mark = if r.infeasible_traces.contains(t) {
            "  (infeasible)"
        } else {
            ""
        };
        let _ = writeln!(out, "  {:>3}. {t}{mark}", i + 1);
    }
    let cases = |out: &mut String, title: &str, g: &snapsat::tcg::Generation| {
        let _ = writeln!(
            out,
            "\n{title}: {} test cases{}",
            g.test_cases.len(),
            if g.truncated { " (limit reached)" } else { "" }
        );
        for (i, t) in g.test_cases.iter().enumerate() {
            let inputs: Vec<String> = t.inputs.iter().map(|(n, v)| format!("{n}={v}")).collect();
            let outcome = match (&t.result, &t.exception) {
                (Some(v), _) => format!("returns {v}"),
                (_, Some(e)) => format!("throws {e}"),
                _ => String::new(),
            };
            let _ = writeln!(out, "  #{:<3} {} → {outcome}", i + 1, inputs.join(" "));
            let _ = writeln!(out, "       trace: {}", t.trace);
            let _ = writeln!(
                out,
                "       path:  {}",
                if t.path_constraints.is_empty() {
                    "true".into()
                } else {
                    t.path_constraints.join(" ∧ ")
                }
            );
        }
        let c = &g.coverage;
        let _ = writeln!(
            out,
            "  coverage of {}: {} local paths; branches (rules) {}/{} ({:.0}%); code (blocks) {}/{} ({:.0}%); {} solver calls",
            r.method,
            c.local_paths,
            c.rules_covered,
            c.rules,
            100.0 * c.rules_covered as f64 / c.rules.max(1) as f64,
            c.blocks_covered,
            c.blocks,
            100.0 * c.blocks_covered as f64 / c.blocks.max(1) as f64,
            g.solver_calls
        );
    };
    cases(&mut out, "guided TCG", &r.guided);
    cases(
        &mut out,
        &format!("non-guided TCG (loop-{})", r.loop_k),
        &r.non_guided,
    );
    let _ = writeln!(
        out,
        "\nguided vs non-guided: {} vs {} test cases",
        r.guided.test_cases.len(),
        r.non_guided.test_cases.len()
    );
    out
}
