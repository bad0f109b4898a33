//! The compressor NCD is measured with: zlib streams whose compressed length so far can be
//! read without ending them.
//!
//! zlib-rs (zlib-ng's algorithms in Rust) through its zlib API, the one interface of it that
//! copies a stream (`deflateCopy`): a length is read by finishing a copy. At the same level it
//! took a third of miniz_oxide's time on suites' 0/1 text (miniz hashes three bytes, of which
//! 0/1 text has 8 values, so its hash chains are long; zlib-ng hashes four), and its output
//! was 2-3% shorter. Its hash and match finding do not depend on the CPU's features, so the
//! lengths are the same on every machine.
//!
//! Unlike miniz's, zlib-rs's output depends on how its input is cut into calls: tests handed
//! over one at a time came out 6-8% longer than their concatenation in one call. A stream
//! therefore hands zlib its input in blocks of [`BLOCK`] bytes of the concatenation, however
//! it was appended, so that a length is a function of the concatenated input alone (within
//! 0.15% of one call's on suites' text).

use libz_rs_sys as z;
use std::cell::{RefCell, UnsafeCell};
use std::ffi::c_int;

/// zlib's default level, the one the NCD convention is stated in.
const LEVEL: c_int = 6;
/// zlib's defaults: a 32 KiB window, memory level 8.
const WINDOW_BITS: c_int = 15;
const MEMORY_LEVEL: c_int = 8;
/// Input handed to zlib in one call: every call but the last of a stream gets this much.
/// Small enough that a length read mid-stream compresses little that is not kept.
const BLOCK: usize = 4096;

thread_local! {
    /// Output scratch for every stream on this thread (only lengths are kept).
    static SCRATCH: RefCell<Vec<u8>> = RefCell::new(vec![0; 1 << 16]);
    /// One stream per thread for one-shot lengths, reset between uses: a fresh one
    /// allocates ~370 KiB of state, which costs more than compressing a short test.
    static ONE_SHOT: RefCell<Stream> = RefCell::new(Stream::started());
    /// Compressor memory given back on this thread, for the next stream to take.
    static SPARE: RefCell<Spare> = const { RefCell::new(Spare(Vec::new())) };
}

/// Blocks a thread keeps for reuse: a measurement ends a copy of each of its streams, and a
/// sampled removal starts as a copy of the whole suite's, each ~370 KiB of state. Fresh from
/// the allocator, every copy was memory the kernel had to clear first (2 MiB huge pages on
/// this machine): a third of the measuring thread's time on 1,000-test runs of small circuits.
/// Reused, a copy costs its `memcpy`.
const SPARE_BLOCKS: usize = 16;

/// Room before each block for its size (zlib's `zfree` is not told it), keeping the block
/// aligned as the system allocator would.
const HEADER: usize = 16;

struct Spare(Vec<(usize, *mut u8)>);

impl Drop for Spare {
    fn drop(&mut self) {
        for &(size, block) in &self.0 {
            // SAFETY: allocated by `allocate` with this size and not handed out since.
            unsafe { std::alloc::dealloc(block, block_layout(size)) };
        }
    }
}

fn block_layout(size: usize) -> std::alloc::Layout {
    std::alloc::Layout::from_size_align(size + HEADER, HEADER).expect("a compressor's block")
}

/// zlib's `zalloc`: a spare block of the same size if this thread has one.
unsafe extern "C" fn allocate(_: z::voidpf, items: z::uInt, size: z::uInt) -> z::voidpf {
    let Some(size) = (items as usize).checked_mul(size as usize) else {
        return std::ptr::null_mut();
    };
    let spare = SPARE
        .try_with(|spare| {
            let blocks = &mut spare.borrow_mut().0;
            let at = blocks.iter().position(|&(s, _)| s == size)?;
            Some(blocks.swap_remove(at).1)
        })
        .ok()
        .flatten();
    // SAFETY: a layout of non-zero size; a block is at least its header.
    let block = spare.unwrap_or_else(|| unsafe { std::alloc::alloc(block_layout(size)) });
    if block.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the block holds its header and `size` bytes after it.
    unsafe {
        block.cast::<usize>().write(size);
        block.add(HEADER).cast()
    }
}

/// zlib's `zfree`: the block goes to this thread's spares, or back to the allocator.
unsafe extern "C" fn release(_: z::voidpf, address: z::voidpf) {
    if address.is_null() {
        return;
    }
    // SAFETY: `address` came from `allocate`, which put the block's size before it.
    let (block, size) = unsafe {
        let block = address.cast::<u8>().sub(HEADER);
        (block, block.cast::<usize>().read())
    };
    let kept = SPARE
        .try_with(|spare| {
            let blocks = &mut spare.borrow_mut().0;
            let keep = blocks.len() < SPARE_BLOCKS;
            if keep {
                blocks.push((size, block));
            }
            keep
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: allocated by `allocate` with this size.
        unsafe { std::alloc::dealloc(block, block_layout(size)) };
    }
}

/// A zlib stream at the default level, its input cut into [`BLOCK`]s whatever the appends.
pub(super) struct Stream {
    /// zlib's state (~370 KiB), made when the stream first hands zlib a block. Until then
    /// the stream is its pending input alone: a copy copies that, and its length is that of
    /// the input compressed in one go, as the state would give it. A small suite's streams
    /// (100 tests of 36 variables: 3.6 KiB) so never make, copy or fault in a state of their
    /// own. Boxed: zlib's state points back at its stream, which must not move. In a cell: a
    /// borrowed stream is copied through a pointer to it.
    raw: Option<Box<UnsafeCell<z::z_stream>>>,
    /// Input appended and not yet handed to zlib: less than a block.
    pending: Vec<u8>,
}

// SAFETY: a stream owns its state alone (a copy gets a state of its own) and zlib-rs keeps no
// per-thread data, so a stream may move to another thread. It is not `Sync` (the cell).
unsafe impl Send for Stream {}

impl Stream {
    /// An empty stream; zlib's state is made with its first block.
    pub(super) fn new() -> Self {
        Stream {
            raw: None,
            pending: Vec::with_capacity(BLOCK),
        }
    }

    /// An empty stream with zlib's state made now: the one-shot stream, which lengths of
    /// streams with no state of their own are measured with.
    fn started() -> Self {
        Stream {
            raw: Some(Self::state()),
            pending: Vec::with_capacity(BLOCK),
        }
    }

    /// zlib's state for a new stream.
    fn state() -> Box<UnsafeCell<z::z_stream>> {
        let raw = Box::new(UnsafeCell::new(z::z_stream {
            zalloc: Some(allocate),
            zfree: Some(release),
            ..z::z_stream::default()
        }));
        // SAFETY: `raw` is a default stream (no buffers) with an allocator of ours, as
        // deflateInit2_ expects, at an address that stays put. Copies inherit the allocator.
        let status = unsafe {
            z::deflateInit2_(
                raw.get(),
                LEVEL,
                z::Z_DEFLATED,
                WINDOW_BITS,
                MEMORY_LEVEL,
                z::Z_DEFAULT_STRATEGY,
                z::zlibVersion(),
                std::mem::size_of::<z::z_stream>() as c_int,
            )
        };
        assert_eq!(
            status,
            z::Z_OK,
            "cannot start a zlib stream (out of memory)"
        );
        raw
    }

    /// Back to a stream with nothing appended, keeping its memory.
    pub(super) fn reset(&mut self) {
        if let Some(raw) = &mut self.raw {
            // SAFETY: an initialized stream, borrowed mutably.
            let status = unsafe { z::deflateReset(raw.get_mut()) };
            assert_eq!(status, z::Z_OK, "zlib stream reset failed");
        }
        self.pending.clear();
    }

    /// Bytes the stream has emitted so far.
    fn emitted(&self) -> usize {
        // SAFETY: no call on the stream is running (it is not `Sync`, and calls take `&mut`).
        self.raw
            .as_ref()
            .map_or(0, |raw| unsafe { (*raw.get()).total_out as usize })
    }

    pub(super) fn append(&mut self, mut input: &[u8]) {
        if !self.pending.is_empty() {
            let take = (BLOCK - self.pending.len()).min(input.len());
            self.pending.extend_from_slice(&input[..take]);
            input = &input[take..];
            if self.pending.len() < BLOCK {
                return;
            }
            let block = std::mem::take(&mut self.pending);
            self.deflate(&block, z::Z_NO_FLUSH);
            self.pending = block;
            self.pending.clear();
        }
        let mut blocks = input.chunks_exact(BLOCK);
        for block in &mut blocks {
            self.deflate(block, z::Z_NO_FLUSH);
        }
        self.pending.extend_from_slice(blocks.remainder());
    }

    /// Ends the stream; its compressed length.
    pub(super) fn finish(&mut self) -> usize {
        let last = std::mem::take(&mut self.pending);
        if self.raw.is_none() {
            return compressed_len([last.as_slice()]);
        }
        self.deflate(&last, z::Z_FINISH);
        self.emitted()
    }

    /// The compressed length if the stream ended now; the stream itself goes on.
    pub(super) fn length_if_ended(&self) -> usize {
        self.clone().finish()
    }

    /// One call's worth of input (at most a block), and what zlib emits for it.
    fn deflate(&mut self, input: &[u8], flush: c_int) {
        let stream = self.raw.get_or_insert_with(Self::state).get_mut();
        stream.next_in = input.as_ptr();
        stream.avail_in = input.len() as u32;
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            loop {
                stream.next_out = scratch.as_mut_ptr();
                stream.avail_out = scratch.len() as u32;
                // SAFETY: an initialized stream, given what is left of `input` to read and
                // all of `scratch` to write, both alive for the call.
                let status = unsafe { z::deflate(stream, flush) };
                let output_full = stream.avail_out == 0;
                let input_left = stream.avail_in > 0;
                match status {
                    z::Z_STREAM_END => break,
                    z::Z_OK if output_full || input_left || flush == z::Z_FINISH => {}
                    // All input taken (Z_BUF_ERROR: there was none, no error between calls).
                    z::Z_OK | z::Z_BUF_ERROR if !input_left && flush != z::Z_FINISH => break,
                    e => panic!("in-memory compression failed: zlib status {e}"),
                }
            }
        });
        stream.next_in = std::ptr::null();
        stream.next_out = std::ptr::null_mut();
    }
}

impl Clone for Stream {
    fn clone(&self) -> Self {
        let raw = self.raw.as_ref().map(|source| {
            let raw = Box::new(UnsafeCell::new(z::z_stream::default()));
            // SAFETY: the source is an initialized stream on which no call is running (it is
            // not `Sync`, and calls take `&mut`); the destination is a stream of our own that
            // deflateCopy overwrites, at an address that stays put.
            let status = unsafe { z::deflateCopy(raw.get(), source.get()) };
            assert_eq!(status, z::Z_OK, "cannot copy a zlib stream (out of memory)");
            raw
        });
        Stream {
            raw,
            pending: self.pending.clone(),
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if let Some(raw) = &mut self.raw {
            // SAFETY: an initialized stream, ended once. Its status only says whether it had
            // been finished; its memory is freed either way.
            unsafe { z::deflateEnd(raw.get_mut()) };
        }
    }
}

/// Length of the zlib compression (default level) of the concatenated parts.
pub fn compressed_len<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> usize {
    ONE_SHOT.with(|cell| {
        let stream = &mut *cell.borrow_mut();
        stream.reset();
        for part in parts {
            stream.append(part);
        }
        stream.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spare_blocks() -> usize {
        SPARE.with(|spare| spare.borrow().0.len())
    }

    /// A stream with no state of its own yet (under a block) measures what one with a state
    /// from the start does, and so do its copies, before and after they pass a block.
    #[test]
    fn streams_without_a_state_yet_measure_as_started_ones() {
        let text: Vec<u8> = (0..3 * BLOCK as u64 + 500)
            .map(|i| b'0' + (i * i % 11 % 2) as u8)
            .collect();
        let (mut lazy, mut started) = (Stream::new(), Stream::started());
        let mut copies = Vec::new();
        for (at, piece) in text.chunks(37).enumerate() {
            lazy.append(piece);
            started.append(piece);
            let end = (at * 37 + piece.len()).min(text.len());
            assert_eq!(
                lazy.length_if_ended(),
                started.length_if_ended(),
                "at {end}"
            );
            assert_eq!(lazy.length_if_ended(), compressed_len([&text[..end]]));
            if at % 40 == 0 {
                copies.push((end, lazy.clone()));
            }
        }
        assert!(lazy.raw.is_some() && copies[0].1.raw.is_none());
        for (end, mut copy) in copies {
            copy.append(&text[end..]);
            assert_eq!(copy.finish(), compressed_len([&text[..]]), "copy at {end}");
        }
    }

    /// A stream's memory goes back to its thread's spares when it ends, a copy takes it from
    /// there, and a copy made from reused memory measures what a fresh stream does.
    #[test]
    fn copies_reuse_the_memory_of_ended_streams() {
        let text: Vec<u8> = (0..50_000u64)
            .map(|i| b'0' + (i * i % 7 % 2) as u8)
            .collect();
        let mut stream = Stream::new();
        stream.append(&text[..30_000]);
        let expected = stream.length_if_ended();
        let spares = spare_blocks();
        assert!(spares > 0, "an ended copy gives its blocks back");
        for _ in 0..5 {
            assert_eq!(stream.length_if_ended(), expected);
            assert_eq!(spare_blocks(), spares, "each copy took the blocks back out");
        }
        stream.append(&text[30_000..]);
        assert_eq!(stream.finish(), compressed_len([&text[..]]));
        // A stream ended on another thread leaves its blocks there.
        let copy = stream.clone();
        std::thread::spawn(move || drop(copy)).join().unwrap();
        assert_eq!(spare_blocks(), spares - spares.min(2));
    }
}
