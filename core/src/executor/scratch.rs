//! Host scratch an executor owns: one arena of `f32` that verbs carve into buffers and reuse across calls.
//!
//! A verb takes the arena for the length of its call ([`super::Executor::host_scratch`]), carves the buffers it
//! needs ([`Scratch::carve`]) and hands them to its tasks. Within a call the arena only grows: after the first call
//! of a given size, later calls of that size allocate nothing, so a model encoding in a loop keeps a flat resident
//! size. When the call's [`ScratchGuard`] drops, an arena past the executor's `scratchLimit` is given back.

use std::sync::MutexGuard;

/// 64 bytes of `f32`: the arena's unit, so every carved buffer starts on a cache line (and a full AVX-512 vector).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

const LINE: usize = 16;

/// An arena of `f32`, reused across calls.
#[derive(Default)]
pub struct Scratch {
    lines: Vec<Line>,
}

impl Scratch {
    /// Splits the arena into `N` buffers of the given lengths, each starting on a 64-byte boundary, growing it
    /// first when it is too small. The contents are whatever the last call left (zeros after a growth).
    pub fn carve<const N: usize>(&mut self, lens: [usize; N]) -> [&mut [f32]; N] {
        let lines: usize = lens.iter().map(|len| len.div_ceil(LINE)).sum();
        if self.lines.len() < lines {
            // Replace rather than extend: nothing in the arena needs to survive, and a fresh zeroed allocation is
            // cheaper than copying the old contents.
            self.lines = Vec::new();
            self.lines = vec![Line([0.0; LINE]); lines];
        }
        // SAFETY: `Line` is `repr(C)` over 16 `f32` with no padding, so the lines are a contiguous `f32` array.
        let mut rest: &mut [f32] =
            unsafe { std::slice::from_raw_parts_mut(self.lines.as_mut_ptr().cast::<f32>(), self.lines.len() * LINE) };
        lens.map(|len| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(len.div_ceil(LINE) * LINE);
            rest = tail;
            &mut head[..len]
        })
    }

    /// Bytes the arena holds now.
    pub fn bytes(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>()
    }

    /// Bytes an arena carved into buffers of `lens` floats takes (each buffer rounded up to a cache line).
    pub fn bytes_for(lens: &[usize]) -> usize {
        lens.iter().map(|len| len.div_ceil(LINE)).sum::<usize>() * std::mem::size_of::<Line>()
    }

    /// Gives the arena back to the allocator when it holds more than `limit` bytes.
    pub fn trim(&mut self, limit: usize) {
        if self.bytes() > limit {
            self.lines = Vec::new();
        }
    }
}

/// The executor's arena, held for one call; dropping it trims the arena to the executor's `scratchLimit`.
pub struct ScratchGuard<'a> {
    pub(super) guard: MutexGuard<'a, Scratch>,
    pub(super) limit: usize,
}

impl ScratchGuard<'_> {
    /// The executor's `scratchLimit` in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl std::ops::Deref for ScratchGuard<'_> {
    type Target = Scratch;
    fn deref(&self) -> &Scratch {
        &self.guard
    }
}

impl std::ops::DerefMut for ScratchGuard<'_> {
    fn deref_mut(&mut self) -> &mut Scratch {
        &mut self.guard
    }
}

impl Drop for ScratchGuard<'_> {
    fn drop(&mut self) {
        self.guard.trim(self.limit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carved_buffers_are_aligned_disjoint_and_reused() {
        let mut scratch = Scratch::default();
        let [a, b, c] = scratch.carve([3, 17, 0]);
        assert_eq!((a.len(), b.len(), c.len()), (3, 17, 0));
        assert_eq!(a.as_ptr() as usize % 64, 0);
        assert_eq!(b.as_ptr() as usize % 64, 0);
        a.fill(1.0);
        b.fill(2.0);
        assert!(a.iter().all(|x| *x == 1.0));
        let grown = scratch.bytes();
        assert_eq!(grown, 64 * 3);
        let [d] = scratch.carve([40]);
        assert_eq!(d.len(), 40);
        assert_eq!(scratch.bytes(), grown, "a smaller request reuses the arena");
        let [e] = scratch.carve([100]);
        assert_eq!(e.len(), 100);
        assert_eq!(scratch.bytes(), 64 * 7);
        assert_eq!(Scratch::bytes_for(&[100]), 64 * 7);
        assert_eq!(Scratch::bytes_for(&[3, 17, 0]), 64 * 3);
        scratch.trim(64 * 7);
        assert_eq!(scratch.bytes(), 64 * 7, "an arena at the limit is kept");
        scratch.trim(64 * 6);
        assert_eq!(scratch.bytes(), 0, "an arena past the limit is given back");
    }
}
