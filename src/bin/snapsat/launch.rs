//! Where the ranks of a run are: this process (with `--ranks` of them as threads) or the
//! processes of an MPI job.

#[cfg(not(feature = "mpi"))]
use crate::failure::usage;
use crate::failure::Result;
#[cfg(feature = "mpi")]
use {crate::failure::say, anyhow::Context};

pub enum Launch {
    /// One process; `ranks` of them as threads (1: no coordinator at all).
    Process { ranks: usize },
    #[cfg(feature = "mpi")]
    Mpi(snapsat::distribute::mpi::Job),
}

impl Launch {
    pub fn detect(ranks: usize) -> Result<Launch> {
        #[cfg(feature = "mpi")]
        if snapsat::distribute::launched_by_mpi() {
            let job =
                snapsat::distribute::mpi::Job::init().context("MPI could not be initialised")?;
            if ranks > 1 && job.rank() == 0 {
                say!("snapsat: note: under MPI the job's processes are the ranks; --ranks is ignored");
            }
            return Ok(Launch::Mpi(job));
        }
        #[cfg(not(feature = "mpi"))]
        if let Some(size) = snapsat::distribute::mpi_job_size().filter(|&n| n > 1) {
            return Err(usage(format!(
                "started as one of {size} MPI processes, but this snapsat was built without MPI: \
                 rebuild with `cargo build --release --features mpi` (scripts/install-mpi installs \
                 what it needs), or use --ranks on one machine"
            )));
        }
        Ok(Launch::Process { ranks })
    }

    /// Rank of this process in the job.
    pub fn rank(&self) -> usize {
        match self {
            Launch::Process { .. } => 0,
            #[cfg(feature = "mpi")]
            Launch::Mpi(job) => job.rank(),
        }
    }

    pub fn ranks(&self) -> usize {
        match self {
            Launch::Process { ranks } => *ranks,
            #[cfg(feature = "mpi")]
            Launch::Mpi(job) => job.size(),
        }
    }

    /// Threads for each rank of this machine: `--threads`, else RAYON_NUM_THREADS, else the
    /// cores shared by the ranks the launcher put here.
    pub fn threads_per_rank(&self, requested: Option<usize>) -> usize {
        let from_env = |name: &str| std::env::var(name).ok()?.parse::<usize>().ok();
        let local_ranks = match self {
            Launch::Process { ranks } => *ranks,
            #[cfg(feature = "mpi")]
            Launch::Mpi(_) => from_env("OMPI_COMM_WORLD_LOCAL_SIZE")
                .or_else(|| from_env("MPI_LOCALNRANKS"))
                .unwrap_or(1),
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        requested
            .or_else(|| from_env("RAYON_NUM_THREADS").filter(|&n| n > 0))
            .unwrap_or(cores / local_ranks.max(1))
            .clamp(1, MAX_THREADS as usize)
    }

    pub fn name(&self) -> &'static str {
        match self {
            Launch::Process { ranks: 1 } => "process",
            Launch::Process { .. } => "in-process-ranks",
            #[cfg(feature = "mpi")]
            Launch::Mpi(_) => "mpi",
        }
    }
}

/// The most threads a rank starts (`-j`).
pub const MAX_THREADS: u64 = 1024;
