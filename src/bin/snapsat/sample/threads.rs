//! The ranks of a run and the threads of each, checked against what the machine allows.

use super::SampleArgs;
use crate::failure::{say, usage, Result};
use snapsat::distribute::launch::{Launch, LaunchError};

/// Worker threads a core may carry. Idle rayon workers spin before they sleep: on 2 cores,
/// 1,024 of them kept the coordinator from running for tens of seconds, past the time limit
/// and an interrupt. More threads than this are started as this many; the solver lanes stay
/// as many as asked, so the suite is the one the threads asked for would give.
const WORKERS_PER_CORE: usize = 16;

/// Threads beside the ranks' own: the main thread, the writer, NCD's, the relay.
const THREADS_BESIDE_RANKS: usize = 4;

/// The threads each rank starts (at most [`WORKERS_PER_CORE`] a core of this machine, for
/// all its in-process ranks together), and the solver lanes the threads asked for give.
fn thread_plan(args: &SampleArgs, launch: &Launch) -> Result<(usize, usize)> {
    let asked = launch.threads_per_rank(args.threads.map(|t| t as usize));
    let lanes = args.lanes.map_or(asked, |l| l as usize);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let local_ranks = match launch {
        Launch::Process { ranks } => *ranks,
        #[cfg(feature = "mpi")]
        Launch::Mpi(_) => 1,
    };
    let runnable = (cores * WORKERS_PER_CORE / local_ranks).max(1);
    let threads = asked.min(runnable);
    if threads < asked && !args.quiet && launch.rank() == 0 {
        say!(
            "snapsat: note: {asked} threads a rank are more than {cores} cores run well; \
             starting {threads} (the {lanes} solver lanes stay, and with them the suite)"
        );
    }
    // A rank's workers and the thread that serves the coordinator.
    let needed = local_ranks * (threads + 1) + THREADS_BESIDE_RANKS;
    if let Some((allowed, limit)) = thread_allowance().filter(|&(allowed, _)| needed > allowed) {
        return Err(usage(format!(
            "{local_ranks} rank(s) × {threads} thread(s) need about {needed} threads, and \
             {limit} allows {allowed}: ask for fewer --ranks or -j"
        )));
    }
    Ok((threads, lanes))
}

/// How many more threads this process may start, and the limit that says so: the user's
/// process limit (`ulimit -u`, which binds all but root), the system's `threads-max`, or the
/// address space (`ulimit -v`) at a worker's 2 MiB stack.
fn thread_allowance() -> Option<(usize, &'static str)> {
    let mut allowances = Vec::new();
    #[cfg(target_os = "linux")]
    {
        let limit = |resource| {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            // SAFETY: getrlimit writes the limit into `limit`, a valid rlimit, and reads nothing.
            let read = unsafe { libc::getrlimit(resource, &mut limit) } == 0;
            (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as usize)
        };
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            if let Some(processes) = limit(libc::RLIMIT_NPROC) {
                allowances.push((processes, "`ulimit -u`"));
            }
        }
        if let Some(bytes) = limit(libc::RLIMIT_AS) {
            allowances.push((bytes / (4 << 20), "`ulimit -v`"));
        }
        let threads_max = std::fs::read_to_string("/proc/sys/kernel/threads-max");
        if let Some(max) = threads_max.ok().and_then(|t| t.trim().parse().ok()) {
            allowances.push((max, "the system's threads-max"));
        }
    }
    allowances.into_iter().min_by_key(|&(allowed, _)| allowed)
}

/// The ranks of the run, each one's threads and the solver lanes; this process's own work
/// gets a global pool of them (coordinated in-process ranks build their own).
pub fn start_ranks(args: &SampleArgs) -> Result<(Launch, usize, usize)> {
    let launch = Launch::detect(args.ranks as usize).map_err(|e| match e {
        LaunchError::NoMpiSupport(_) => usage(e),
        LaunchError::MpiInit => anyhow::Error::from(e).into(),
    })?;
    if args.ranks > 1 && launch.ranks() > 1 && launch.name() == "mpi" && launch.rank() == 0 {
        say!("snapsat: note: under MPI the job's processes are the ranks; --ranks is ignored");
    }
    let (threads, lanes) = thread_plan(args, &launch)?;
    if launch.ranks() == 1 || launch.rank() > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start the worker threads: {e}"))?;
    }
    Ok((launch, threads, lanes))
}
