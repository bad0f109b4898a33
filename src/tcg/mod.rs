//! Guided test-case generation (TCG) under the all-local-paths criterion, after Albert,
//! Gómez-Zamalloa, Rojas and Puebla (the second seed): a second front end of snapsat.
//!
//! A program in a small Java-like language ([`lang`]) becomes rules with traces ([`rules`]).
//! The trace-abstraction, sliced for the method under test, generates its local paths up to
//! loop-k ([`traces`]); each guides a symbolic execution of the whole program ([`explore`])
//! over fixed-width integers that are bit-blasted to CNF and solved by splr ([`bitblast`]).
//! The free parts of a trace (callees) are explored until the first feasible completion.
//! Plain symbolic execution of the method and its callees is the non-guided baseline.
//! [`emit_cnf`] writes the paths' constraints as one CNF for `snapsat sample`.

pub mod ast;
pub mod bitblast;
pub mod examples;
pub mod explore;
pub mod lang;
mod lex;
pub mod rules;
pub mod term;
pub mod traces;

use crate::budget::Budget;
use crate::solver::Oracle;
use explore::{Explorer, InputValue, Path, PathEnd};
use rules::Rules;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use traces::Trace;

/// Which paths the guided generator asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Every path of the method under test itself (callees free): the seed's criterion.
    AllLocalPaths,
    /// Every path through the method and its callees.
    AllPaths,
}

impl Criterion {
    /// The names `FromStr` takes, as reports write them.
    pub const NAMES: [&'static str; 2] = ["all-local-paths", "all-paths"];
}

impl std::str::FromStr for Criterion {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        match name {
            "all-local-paths" => Ok(Criterion::AllLocalPaths),
            "all-paths" => Ok(Criterion::AllPaths),
            _ => Err(format!(
                "unknown criterion `{name}` (one of {})",
                Self::NAMES.join(", ")
            )),
        }
    }
}

/// Parameters of a `tcg` run.
#[derive(Debug, Clone)]
pub struct TcgConfig {
    /// The method under test.
    pub method: String,
    /// Loop iterations unrolled (k).
    pub loop_k: usize,
    /// Which paths to ask for.
    pub criterion: Criterion,
    /// Bits of an int (32: Java's).
    pub width: u32,
    /// Most traces or paths considered by either generator.
    pub limit: usize,
}

/// One generated test.
#[derive(Debug, Clone, Serialize)]
pub struct TestCase {
    /// Parameter → value (arrays element by element).
    pub inputs: Vec<(String, i64)>,
    /// The result, or the uncaught exception.
    pub result: Option<i64>,
    /// The uncaught exception, if the method threw.
    pub exception: Option<String>,
    /// The rules the run took, callees included.
    pub trace: String,
    /// The trace as the method under test sees it (callees free).
    pub local_trace: String,
    /// The guards of the path, as the solver got them.
    pub path_constraints: Vec<String>,
    /// The path, for coverage and CNF output.
    #[serde(skip)]
    pub path: Path,
}

/// Coverage of the method under test's rules by a set of tests.
#[derive(Debug, Clone, Serialize)]
pub struct Coverage {
    /// Distinct local paths the tests take.
    pub local_paths: usize,
    /// Rules of the method under test some test takes.
    pub rules_covered: usize,
    /// Rules of the method under test.
    pub rules: usize,
    /// Blocks of the method under test some test enters.
    pub blocks_covered: usize,
    /// Blocks of the method under test.
    pub blocks: usize,
}

/// What one generator (guided or not) produced.
#[derive(Debug, Clone, Serialize)]
pub struct Generation {
    /// The tests, in the order found.
    pub test_cases: Vec<TestCase>,
    /// Their coverage of the method under test.
    pub coverage: Coverage,
    /// Feasibility and model queries.
    pub solver_calls: u64,
    /// Symbolic runs started.
    pub runs: u64,
    /// The limit cut the search short.
    pub truncated: bool,
}

/// Everything a `tcg` run measured, both generators side by side.
#[derive(Debug, Clone, Serialize)]
pub struct TcgReport {
    /// The method under test.
    pub method: String,
    /// Loop iterations unrolled (k).
    pub loop_k: usize,
    /// The criterion asked for.
    pub criterion: Criterion,
    /// Bits of an int.
    pub width: u32,
    /// The method's rules, as text.
    pub rules: Vec<String>,
    /// The traces the guided generator tried (sliced for all-local-paths).
    pub traces: Vec<String>,
    /// Traces the solver proved infeasible.
    pub infeasible_traces: Vec<String>,
    /// The guided generator's tests (the seed's method).
    pub guided: Generation,
    /// Plain symbolic execution's tests, for comparison.
    pub non_guided: Generation,
    /// The time limit or an interrupt cut the run short: it reports what was found by then.
    pub time_limit_reached: bool,
    /// The terms the guided tests' constraints refer to (for [`emit_cnf`]).
    #[serde(skip)]
    pub terms: term::Terms,
}

/// Errors of a TCG run.
#[derive(Debug, thiserror::Error)]
pub enum TcgError {
    /// `--method` names no method of the program.
    #[error("no method `{0}` in the program")]
    UnknownMethod(String),
    /// The solver failed on a path condition.
    #[error("solver: {0}")]
    Solver(String),
}

/// `guidedTCG(M, loop-k)` and the non-guided baseline for the same method, within `budget`
/// (what was found when it runs out is reported, marked as cut short).
pub fn run(
    rules: &Rules,
    config: &TcgConfig,
    oracle: &dyn Oracle,
    budget: Budget,
) -> Result<TcgReport, TcgError> {
    let unknown = || TcgError::UnknownMethod(config.method.clone());
    rules.method_block(&config.method).ok_or_else(unknown)?;
    let sliced = config.criterion == Criterion::AllLocalPaths;
    let traces = traces::generate(
        rules,
        &config.method,
        config.loop_k,
        sliced,
        config.limit,
        budget,
    );
    let explorer = || {
        Explorer::new(
            rules,
            &config.method,
            config.width,
            config.loop_k,
            oracle,
            budget,
        )
        .ok_or_else(unknown)
    };

    let mut ex = explorer()?;
    let mut guided = Vec::new();
    let mut infeasible = Vec::new();
    for trace in &traces {
        let (paths, _) = ex.explore(Some(trace), true, 1).map_err(TcgError::Solver)?;
        if ex.out_of_time {
            break;
        }
        match paths.into_iter().next() {
            Some(path) => match test_case(rules, &config.method, &mut ex, path) {
                Ok(case) => guided.push(case),
                Err(_) if budget.exhausted() => break,
                Err(e) => return Err(e),
            },
            None => infeasible.push(trace.show(rules)),
        }
    }
    let mut time_limit_reached = ex.out_of_time || budget.exhausted();
    let guided = Generation {
        coverage: coverage(rules, &config.method, &guided),
        test_cases: guided,
        solver_calls: ex.solver_calls,
        runs: ex.runs,
        truncated: traces.len() >= config.limit || time_limit_reached,
    };
    let terms = ex.terms;

    let mut ex = explorer()?;
    let (paths, truncated) = ex
        .explore(None, false, config.limit)
        .map_err(TcgError::Solver)?;
    let mut plain = Vec::new();
    for path in paths {
        match test_case(rules, &config.method, &mut ex, path) {
            Ok(case) => plain.push(case),
            Err(_) if budget.exhausted() => break,
            Err(e) => return Err(e),
        }
    }
    time_limit_reached |= ex.out_of_time || budget.exhausted();
    let non_guided = Generation {
        coverage: coverage(rules, &config.method, &plain),
        test_cases: plain,
        solver_calls: ex.solver_calls,
        runs: ex.runs,
        truncated: truncated || time_limit_reached,
    };
    Ok(TcgReport {
        method: config.method.clone(),
        loop_k: config.loop_k,
        criterion: config.criterion,
        width: config.width,
        rules: rules.listing(&config.method),
        traces: traces.iter().map(|t| t.show(rules)).collect(),
        infeasible_traces: infeasible,
        guided,
        non_guided,
        time_limit_reached,
        terms,
    })
}

fn test_case(
    rules: &Rules,
    method: &str,
    ex: &mut Explorer,
    path: Path,
) -> Result<TestCase, TcgError> {
    let values = ex.solve(&path).map_err(TcgError::Solver)?;
    let terms = &ex.terms;
    let value = |t| terms.signed(terms.eval(t, &values));
    let mut inputs = Vec::new();
    for (name, input) in &ex.params {
        match input {
            InputValue::Int(t) => inputs.push((name.clone(), value(*t))),
            InputValue::Array(words) => {
                for (i, t) in words.iter().enumerate() {
                    inputs.push((format!("{name}[{i}]"), value(*t)));
                }
            }
        }
    }
    let (result, exception) = match &path.end {
        PathEnd::Returned(t) => (Some(value(*t)), None),
        PathEnd::Threw(e) => (None, Some(e.to_string())),
    };
    Ok(TestCase {
        inputs,
        result,
        exception,
        trace: path.trace.show(rules),
        local_trace: path.trace.sliced(rules, method).show(rules),
        path_constraints: path.constraints.iter().map(|&c| terms.show(c)).collect(),
        path,
    })
}

fn coverage(rules: &Rules, method: &str, tests: &[TestCase]) -> Coverage {
    let own: BTreeSet<usize> = rules.blocks_of(method).collect();
    let mut ran = Vec::new();
    for t in tests {
        t.path.trace.rules_run(&mut ran);
    }
    let ran: BTreeSet<(usize, usize)> = ran.into_iter().filter(|(b, _)| own.contains(b)).collect();
    let local: HashSet<Trace> = tests
        .iter()
        .map(|t| t.path.trace.sliced(rules, method))
        .collect();
    Coverage {
        local_paths: local.len(),
        rules_covered: ran.len(),
        rules: own.iter().map(|&b| rules.blocks[b].rules.len()).sum(),
        blocks_covered: ran.iter().map(|(b, _)| b).collect::<BTreeSet<_>>().len(),
        blocks: own.len(),
    }
}

/// The path constraints of `tests` as one DIMACS CNF: a selector variable per path implies
/// its constraints, one clause asks for some path, and `c ind` names the input bits, so
/// that `snapsat sample` draws many inputs per path. Comments map selectors to traces.
pub fn emit_cnf(terms: &term::Terms, tests: &[TestCase]) -> String {
    let mut b = bitblast::Blaster::new(terms);
    let input_bits: Vec<Vec<i32>> = (0..terms.inputs().len() as u32)
        .map(|i| b.input_bits(i))
        .collect();
    let mut selectors = Vec::new();
    for t in tests {
        let s = b.fresh();
        for &c in &t.path.constraints {
            let l = b.bit(c);
            b.add_clause(vec![-s, l]);
        }
        selectors.push(s);
    }
    b.add_clause(selectors.clone());
    let mut out = String::new();
    out.push_str("c snapsat tcg: path constraints, one selector variable a path\n");
    for (name, bits) in terms.inputs().iter().zip(&input_bits) {
        out.push_str(&format!(
            "c input {name}: variables {}..{} (least significant first, two's complement)\n",
            bits[0],
            bits[bits.len() - 1]
        ));
    }
    for (t, s) in tests.iter().zip(&selectors) {
        out.push_str(&format!("c path {s}: {}\n", t.trace));
    }
    let ind: Vec<String> = input_bits.iter().flatten().map(|v| v.to_string()).collect();
    out.push_str(&format!("c ind {} 0\n", ind.join(" ")));
    out.push_str(&format!("p cnf {} {}\n", b.num_vars(), b.clauses().len()));
    for clause in b.clauses() {
        for l in clause {
            out.push_str(&l.to_string());
            out.push(' ');
        }
        out.push_str("0\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the command line takes are the ones reports write, and no others parse.
    #[test]
    fn criterion_names_parse_to_what_reports_write() {
        for name in Criterion::NAMES {
            let criterion: Criterion = name.parse().unwrap();
            assert_eq!(
                serde_json::to_string(&criterion).unwrap(),
                format!("\"{name}\"")
            );
        }
        assert!("all".parse::<Criterion>().is_err());
    }
    use crate::solver::Splr;

    fn report(source: &str, method: &str, loop_k: usize, width: u32) -> TcgReport {
        let rules = rules::translate(&lang::parse(source).unwrap()).unwrap();
        let config = TcgConfig {
            method: method.into(),
            loop_k,
            criterion: Criterion::AllLocalPaths,
            width,
            limit: 10_000,
        };
        run(&rules, &config, &Splr, crate::budget::Budget::unlimited()).unwrap()
    }

    fn input(t: &TestCase, name: &str) -> i64 {
        t.inputs.iter().find(|(n, _)| n == name).unwrap().1
    }

    /// lcm as Java computes it on ints of `width` bits (None: it throws, caught as -1).
    fn lcm_reference(a: i64, b: i64, width: u32) -> i64 {
        let wrap = |v: i64| {
            let shift = 64 - width;
            (v << shift) >> shift
        };
        let (mut a, mut b) = if a < b { (b, a) } else { (a, b) };
        let (x, y) = (a, b);
        while b != 0 {
            let r = wrap(a.wrapping_rem(b));
            a = b;
            b = r;
        }
        let d = wrap(a.wrapping_abs());
        let p = wrap(x.wrapping_mul(y));
        if d == 0 {
            -1
        } else {
            wrap(wrap(p.wrapping_abs()).wrapping_div(d))
        }
    }

    #[test]
    fn lcm_has_six_sliced_traces_and_three_guided_tests_as_in_the_paper() {
        for k in [0, 2] {
            let r = report(examples::LCM, "lcm", k, 32);
            assert_eq!(r.traces.len(), 6, "loop-{k}");
            let tests = &r.guided.test_cases;
            assert_eq!(tests.len(), 3, "loop-{k}");
            let kinds: Vec<&str> = tests
                .iter()
                .map(|t| {
                    let (x, y) = (input(t, "a"), input(t, "b"));
                    match t.result {
                        Some(-1) if x == 0 && y == 0 => "a=b=0, division by zero caught",
                        Some(_) if x >= y => "a>=b",
                        Some(_) => "b>a",
                        None => "uncaught",
                    }
                })
                .collect();
            for kind in ["a>=b", "a=b=0, division by zero caught", "b>a"] {
                assert_eq!(kinds.iter().filter(|&&k| k == kind).count(), 1, "{kinds:?}");
            }
            let c = &r.guided.coverage;
            assert_eq!((c.rules_covered, c.blocks_covered), (c.rules, c.blocks));
        }
    }

    #[test]
    fn every_test_returns_what_the_program_computes() {
        for width in [8, 32] {
            let r = report(examples::LCM, "lcm", 2, width);
            assert!(r.non_guided.test_cases.len() > r.guided.test_cases.len());
            for t in r.guided.test_cases.iter().chain(&r.non_guided.test_cases) {
                let expected = lcm_reference(input(t, "a"), input(t, "b"), width);
                assert_eq!(t.result, Some(expected), "{t:?}");
            }
        }
    }

    #[test]
    fn mid_has_six_paths_and_six_tests() {
        let r = report(examples::MID, "mid", 2, 32);
        assert_eq!(r.traces.len(), 6);
        assert_eq!(r.guided.test_cases.len(), 6);
        assert_eq!(r.non_guided.test_cases.len(), 6);
        for t in &r.guided.test_cases {
            let mut xyz = [input(t, "x"), input(t, "y"), input(t, "z")];
            xyz.sort();
            assert_eq!(t.result, Some(xyz[1]), "{t:?}");
        }
        assert_eq!(r.guided.coverage.rules_covered, r.guided.coverage.rules);
    }

    #[test]
    fn more_loop_iterations_give_the_non_guided_generator_more_paths() {
        let counts: Vec<usize> = (0..3)
            .map(|k| {
                report(examples::LCM, "lcm", k, 8)
                    .non_guided
                    .test_cases
                    .len()
            })
            .collect();
        assert!(counts[0] < counts[1] && counts[1] < counts[2], "{counts:?}");
    }

    #[test]
    fn guided_tests_cover_what_exhaustive_exploration_covers() {
        // bstInsert's callees may throw (array bounds), which makes local paths of their own.
        // Rules no test reaches are out-of-bounds branches that earlier checks exclude.
        for method in ["elemAt", "sortedInsert", "bstInsert"] {
            let r = report(examples::DATA_STRUCTURES, method, 1, 6);
            let (g, n) = (&r.guided.coverage, &r.non_guided.coverage);
            assert_eq!(g.local_paths, n.local_paths, "{method}");
            assert_eq!(g.rules_covered, n.rules_covered, "{method}");
            assert_eq!(
                g.blocks_covered, g.blocks,
                "{method}: some code is never run"
            );
            assert_eq!(
                r.guided.test_cases.len(),
                g.local_paths,
                "one test a local path"
            );
            assert!(r.guided.test_cases.len() <= r.non_guided.test_cases.len());
        }
    }

    #[test]
    fn emitted_cnf_models_are_inputs_of_some_path() {
        use crate::dimacs::{self, Strictness};
        use crate::solver::{Outcome, Query};
        let r = report(examples::MID, "mid", 2, 8);
        let text = emit_cnf(&r.terms, &r.guided.test_cases);
        let cnf = dimacs::parse(text.as_bytes(), Strictness::Strict)
            .unwrap()
            .cnf;
        assert_eq!(cnf.independent_support().len(), 3 * 8);
        let clauses: Vec<Vec<i32>> = cnf.clauses().map(|c| c.to_vec()).collect();
        for seed in 0..20 {
            let query = Query::new(cnf.num_vars(), &clauses, seed);
            let Outcome::Sat(model) = Splr.solve(&query) else {
                panic!("the emitted CNF is unsatisfiable")
            };
            let inputs: Vec<u64> = (0..3)
                .map(|i| (0..8).map(|k| (model[i * 8 + k + 1] as u64) << k).sum())
                .collect();
            let on_some_path = r.guided.test_cases.iter().any(|t| {
                t.path
                    .constraints
                    .iter()
                    .all(|&c| r.terms.eval(c, &inputs) == 1)
            });
            assert!(on_some_path, "model {inputs:?} is on no path");
        }
    }
}
