//! Where the ranks of a run are: this process (with `--ranks` of them as threads) or the
//! processes of an MPI job, as the launcher's environment says.

/// The most threads a rank starts (`-j`).
pub const MAX_THREADS: u64 = 1024;

/// The size of the MPI job this process was started in, as the launcher's environment
/// gives it (OpenMPI, MPICH/Hydra, Slurm's PMI).
pub fn mpi_job_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// True when an MPI launcher started this process (PMIx may name the rank alone).
pub fn launched_by_mpi() -> bool {
    mpi_job_size().is_some()
        || ["PMIX_RANK", "PMI_RANK"]
            .iter()
            .any(|v| std::env::var_os(v).is_some())
}

/// Why the ranks could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// `mpirun` started this build, which has no MPI: N copies would overwrite one another.
    #[error(
        "started as one of {0} MPI processes, but this snapsat was built without MPI: rebuild \
         with `cargo build --release --features mpi` (scripts/install-mpi installs what it \
         needs), or use --ranks on one machine"
    )]
    NoMpiSupport(usize),
    /// The MPI library refused to start.
    #[error("MPI could not be initialised")]
    MpiInit,
}

/// The ranks of this run.
pub enum Launch {
    /// One process; `ranks` of them as threads (1: no coordinator at all).
    Process {
        /// Ranks run as threads of this process.
        ranks: usize,
    },
    /// This process is one rank of an MPI job.
    #[cfg(feature = "mpi")]
    Mpi(super::mpi::Job),
}

impl Launch {
    /// An MPI job's rank ending before its part of the run starts, for `why`: rank 0 lets the
    /// other ranks go (its coordinator does that however it ends, once started); another rank
    /// tells rank 0, which waits for it to be ready. Without this, rank 0 refusing an output
    /// or a malformed suite to resume, or a rank that cannot read the formula (a path its
    /// node lacks), left the rest of the job, and `mpirun`, waiting for ever. Nothing in one
    /// process. True when rank 0 took the failure over (this is another rank): it ends the
    /// job with it, so this rank should leave without a failing status of its own, on which
    /// `mpirun` would abort the job, rank 0's account of it perhaps unsaid.
    /// `input`: the failure is the rank's input's (rank 0 refuses the run as bad input).
    pub fn abandon(&self, why: &str, input: bool) -> bool {
        #[cfg(feature = "mpi")]
        if let Launch::Mpi(job) = self {
            if job.rank() == 0 {
                job.release();
            } else {
                use super::protocol::ToCoordinator;
                job.fail(match input {
                    true => ToCoordinator::Refused(why.to_owned()),
                    false => ToCoordinator::Failed(why.to_owned()),
                });
                return true;
            }
        }
        let _ = (why, input);
        false
    }

    /// An MPI job when a launcher started this process, else `ranks` in this process.
    pub fn detect(ranks: usize) -> Result<Launch, LaunchError> {
        #[cfg(feature = "mpi")]
        if launched_by_mpi() {
            return super::mpi::Job::init()
                .map(Launch::Mpi)
                .ok_or(LaunchError::MpiInit);
        }
        #[cfg(not(feature = "mpi"))]
        if let Some(size) = mpi_job_size().filter(|&n| n > 1) {
            return Err(LaunchError::NoMpiSupport(size));
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

    /// Ranks in the run.
    pub fn ranks(&self) -> usize {
        match self {
            Launch::Process { ranks } => *ranks,
            #[cfg(feature = "mpi")]
            Launch::Mpi(job) => job.size(),
        }
    }

    /// Threads for each rank of this machine: `requested`, else RAYON_NUM_THREADS, else the
    /// cores shared by the ranks the launcher put here; at most [`MAX_THREADS`].
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

    /// How `--stats` names the launch.
    pub fn name(&self) -> &'static str {
        match self {
            Launch::Process { ranks: 1 } => "process",
            Launch::Process { .. } => "in-process-ranks",
            #[cfg(feature = "mpi")]
            Launch::Mpi(_) => "mpi",
        }
    }
}
