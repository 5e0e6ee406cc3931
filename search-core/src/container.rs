//! The binary container shared by `index.bin` and `encoder.bin`: a header, a table
//! of named sections, and the sections themselves, each aligned to 64 bytes.
//!
//! ```text
//! 0   magic        8 bytes ("KBINDEX\0", "KBENCOD\0")
//! 8   version      u32 LE   (format version of what the file holds)
//! 12  count        u32 LE   (number of sections, ≤ 4096)
//! 16  file length  u64 LE   (catches truncated files)
//! 24  reserved     u64
//! 32  table        count × { name [u8; 24] NUL-padded, offset u64, length u64 }
//!     sections     each at a multiple of 64
//! ```
//!
//! [`Container::open`] reads only the header and the table: nothing proportional to
//! the data is parsed or copied, so opening the bytes that `include_bytes!` put in a
//! component's data segment costs microseconds. Typed views ([`Container::f32s`] …)
//! are zero-copy casts that check alignment and length instead of assuming them:
//! corrupt input is an error, never a panic or undefined behaviour.

use std::fmt;

const HEADER: usize = 32;
const ENTRY: usize = 40;
const NAME: usize = 24;
/// Every section starts at a multiple of this.
pub const ALIGN: usize = 64;
const MAX_SECTIONS: usize = 4096;

/// Why bytes are not a readable container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerError {
    TooShort { len: usize },
    BadMagic { expected: [u8; 8], found: [u8; 8] },
    Version { expected: u32, found: u32 },
    Truncated { expected: u64, found: usize },
    BadTable(String),
    Missing(String),
    Misaligned { section: String },
    Shape { section: String, message: String },
}

impl fmt::Display for ContainerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ContainerError::TooShort { len } => write!(f, "file is {len} bytes, too short to be an index or encoder file"),
            ContainerError::BadMagic { expected, found } => write!(
                f,
                "not a {} file (starts with {:?}); pass the file that `site-builder build` wrote",
                String::from_utf8_lossy(expected).trim_end_matches('\0'),
                String::from_utf8_lossy(found)
            ),
            ContainerError::Version { expected, found } => write!(
                f,
                "file format version {found}, this program reads version {expected}; rebuild it with this version of `site-builder build`"
            ),
            ContainerError::Truncated { expected, found } => {
                write!(f, "file is truncated: header says {expected} bytes, found {found}")
            }
            ContainerError::BadTable(m) => write!(f, "corrupt section table: {m}"),
            ContainerError::Missing(s) => write!(f, "section `{s}` is missing; the file is corrupt or from another version"),
            ContainerError::Misaligned { section } => write!(
                f,
                "section `{section}` is not aligned in memory; load the file into 64-byte aligned memory (search_core::container::AlignedBytes)"
            ),
            ContainerError::Shape { section, message } => write!(
                f,
                "section `{section}`: {message}; the file is corrupt, rebuild it with `site-builder build`"
            ),
        }
    }
}

impl std::error::Error for ContainerError {}

/// A [`ContainerError::Shape`]: section `section` holds something impossible.
pub fn corrupt(section: &str, message: impl Into<String>) -> ContainerError {
    ContainerError::Shape { section: section.to_string(), message: message.into() }
}

/// `a × b` values of section `section`, or the error that the counts overflow
/// (`usize` is 32 bits on wasm32, where a wrapped product could match a small
/// section and make later indexing go out of bounds).
pub fn product(section: &str, a: usize, b: usize) -> Result<usize, ContainerError> {
    a.checked_mul(b).ok_or_else(|| corrupt(section, format!("{a} × {b} values overflow")))
}

/// Checks an offset table (`n + 1` ascending offsets into `len` bytes or values):
/// once this holds, `off[i]..off[i + 1]` is a valid range for every `i`.
pub fn check_offsets(section: &str, off: &[u32], len: usize) -> Result<(), ContainerError> {
    if let Some(i) = off.windows(2).position(|w| w[0] > w[1]) {
        return Err(corrupt(section, format!("offset {i} ({}) is past offset {} ({})", off[i], i + 1, off[i + 1])));
    }
    match off.last() {
        Some(&e) if e as usize > len => Err(corrupt(section, format!("last offset {e} is past the end ({len})"))),
        _ => Ok(()),
    }
}

/// A validated view of a container's bytes.
#[derive(Clone, Copy)]
pub struct Container<'a> {
    bytes: &'a [u8],
    count: usize,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

impl<'a> Container<'a> {
    /// Checks the header and the section table; reads nothing else.
    pub fn open(bytes: &'a [u8], magic: [u8; 8], version: u32) -> Result<Container<'a>, ContainerError> {
        Container::open_versions(bytes, magic, &[version]).map(|(c, _)| c)
    }

    /// [`Container::open`] for a reader of several versions (the newest last, as
    /// the error names it); returns the file's version with the view.
    pub fn open_versions(
        bytes: &'a [u8],
        magic: [u8; 8],
        versions: &[u32],
    ) -> Result<(Container<'a>, u32), ContainerError> {
        if bytes.len() < HEADER {
            return Err(ContainerError::TooShort { len: bytes.len() });
        }
        let mut found = [0u8; 8];
        found.copy_from_slice(&bytes[..8]);
        if found != magic {
            return Err(ContainerError::BadMagic { expected: magic, found });
        }
        let v = u32_at(bytes, 8);
        if !versions.contains(&v) {
            return Err(ContainerError::Version { expected: versions.last().copied().unwrap_or(0), found: v });
        }
        let count = u32_at(bytes, 12) as usize;
        let len = u64_at(bytes, 16);
        if len != bytes.len() as u64 {
            return Err(ContainerError::Truncated { expected: len, found: bytes.len() });
        }
        if count > MAX_SECTIONS || HEADER + count * ENTRY > bytes.len() {
            return Err(ContainerError::BadTable(format!("{count} sections do not fit in {} bytes", bytes.len())));
        }
        let c = Container { bytes, count };
        for i in 0..count {
            let (name, off, n) = c.entry(i);
            let end = off.checked_add(n);
            if off % ALIGN as u64 != 0
                || end.is_none_or(|e| e > bytes.len() as u64)
                || off < (HEADER + count * ENTRY) as u64
            {
                return Err(ContainerError::BadTable(format!("section `{name}` at {off}+{n} is out of bounds")));
            }
        }
        Ok((c, v))
    }

    fn entry(&self, i: usize) -> (String, u64, u64) {
        let at = HEADER + i * ENTRY;
        let raw = &self.bytes[at..at + NAME];
        let end = raw.iter().position(|&b| b == 0).unwrap_or(NAME);
        let name = String::from_utf8_lossy(&raw[..end]).into_owned();
        (name, u64_at(self.bytes, at + NAME), u64_at(self.bytes, at + NAME + 8))
    }

    /// Names of the sections, in file order.
    pub fn names(&self) -> Vec<String> {
        (0..self.count).map(|i| self.entry(i).0).collect()
    }

    /// Where the table entry named `name` is (the first one, if a corrupt table
    /// names a section twice).
    fn find(&self, name: &str) -> Option<usize> {
        (0..self.count).find(|&i| {
            let at = HEADER + i * ENTRY;
            let raw = &self.bytes[at..at + NAME];
            let end = raw.iter().position(|&b| b == 0).unwrap_or(NAME);
            &raw[..end] == name.as_bytes()
        })
    }

    /// Whether the container has a section called `name`.
    pub fn has(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The raw bytes of a section.
    pub fn bytes(&self, name: &str) -> Result<&'a [u8], ContainerError> {
        let i = self.find(name).ok_or_else(|| ContainerError::Missing(name.to_string()))?;
        let at = HEADER + i * ENTRY;
        // `open` checked offset + length against the file's length, so both fit
        // in `usize` (also on wasm32) and the range is in bounds; `get` keeps that
        // a checked fact rather than an assumption.
        let (off, n) = (u64_at(self.bytes, at + NAME), u64_at(self.bytes, at + NAME + 8));
        let range =
            usize::try_from(off).ok().zip(usize::try_from(n).ok()).and_then(|(o, n)| Some(o..o.checked_add(n)?));
        range
            .and_then(|r| self.bytes.get(r))
            .ok_or_else(|| ContainerError::BadTable(format!("section `{name}` at {off}+{n} is out of bounds")))
    }

    fn cast<T: bytemuck::Pod>(&self, name: &str) -> Result<&'a [T], ContainerError> {
        let b = self.bytes(name)?;
        bytemuck::try_cast_slice(b).map_err(|e| match e {
            bytemuck::PodCastError::TargetAlignmentGreaterAndInputNotAligned => {
                ContainerError::Misaligned { section: name.to_string() }
            }
            other => ContainerError::Shape { section: name.to_string(), message: format!("{other:?}") },
        })
    }

    pub fn f32s(&self, name: &str) -> Result<&'a [f32], ContainerError> {
        self.cast(name)
    }

    pub fn u32s(&self, name: &str) -> Result<&'a [u32], ContainerError> {
        self.cast(name)
    }

    pub fn i8s(&self, name: &str) -> Result<&'a [i8], ContainerError> {
        self.cast(name)
    }

    /// A section that must hold exactly `n` values of `T`.
    pub fn exact<T: bytemuck::Pod>(&self, name: &str, n: usize) -> Result<&'a [T], ContainerError> {
        let s: &[T] = self.cast(name)?;
        if s.len() != n {
            return Err(ContainerError::Shape {
                section: name.to_string(),
                message: format!("expected {n} values, found {}", s.len()),
            });
        }
        Ok(s)
    }
}

/// Builds a container in memory (the caller writes the bytes where it wants).
pub struct Writer {
    magic: [u8; 8],
    version: u32,
    sections: Vec<(String, Vec<u8>)>,
}

impl Writer {
    pub fn new(magic: [u8; 8], version: u32) -> Writer {
        Writer { magic, version, sections: Vec::new() }
    }

    /// Adds a section. Names are at most 24 bytes and unique.
    pub fn add(&mut self, name: &str, bytes: Vec<u8>) {
        assert!(name.len() <= NAME && !name.is_empty(), "section name `{name}` must be 1..=24 bytes");
        assert!(self.sections.iter().all(|(n, _)| n != name), "section `{name}` added twice");
        self.sections.push((name.to_string(), bytes));
    }

    pub fn add_f32(&mut self, name: &str, v: &[f32]) {
        self.add(name, bytemuck::cast_slice(v).to_vec());
    }

    pub fn add_u32(&mut self, name: &str, v: &[u32]) {
        self.add(name, bytemuck::cast_slice(v).to_vec());
    }

    pub fn add_i8(&mut self, name: &str, v: &[i8]) {
        self.add(name, bytemuck::cast_slice(v).to_vec());
    }

    pub fn add_i32(&mut self, name: &str, v: &[i32]) {
        self.add(name, bytemuck::cast_slice(v).to_vec());
    }

    pub fn finish(self) -> Vec<u8> {
        let align = |n: usize| n.div_ceil(ALIGN) * ALIGN;
        let mut offset = align(HEADER + self.sections.len() * ENTRY);
        let mut table = Vec::with_capacity(self.sections.len());
        for (name, bytes) in &self.sections {
            table.push((name, offset, bytes.len()));
            offset = align(offset + bytes.len());
        }
        let total = table.last().map_or(align(HEADER), |(_, o, n)| o + n);
        let mut out = vec![0u8; total];
        out[..8].copy_from_slice(&self.magic);
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        out[12..16].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        out[16..24].copy_from_slice(&(total as u64).to_le_bytes());
        for (i, ((name, off, n), (_, bytes))) in table.iter().zip(&self.sections).enumerate() {
            let at = HEADER + i * ENTRY;
            out[at..at + name.len()].copy_from_slice(name.as_bytes());
            out[at + NAME..at + NAME + 8].copy_from_slice(&(*off as u64).to_le_bytes());
            out[at + NAME + 8..at + ENTRY].copy_from_slice(&(*n as u64).to_le_bytes());
            out[*off..off + n].copy_from_slice(bytes);
        }
        out
    }
}

/// Bytes held at a 64-byte aligned address, so that typed section views work on
/// data read from a file (a `Vec<u8>` only promises byte alignment).
pub struct AlignedBytes {
    blocks: Vec<Block>,
    len: usize,
}

#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
struct Block([u8; 64]);

impl AlignedBytes {
    pub fn new(bytes: &[u8]) -> AlignedBytes {
        let mut blocks = vec![Block([0; 64]); bytes.len().div_ceil(64)];
        bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[..bytes.len()].copy_from_slice(bytes);
        AlignedBytes { blocks, len: bytes.len() }
    }

    pub fn as_slice(&self) -> &[u8] {
        &bytemuck::cast_slice::<Block, u8>(&self.blocks)[..self.len]
    }
}

/// Corrupt variants of a valid container, for the tests of every reader: each
/// byte of the header and table flipped; every `stride`-th byte of the whole file
/// flipped (two patterns); 400 positions from a fixed seed set to a random byte
/// or to 0xFF (large counts and ids); and truncations at every section's start
/// and end, with the header's length both left alone and patched to match (so
/// the reader gets past the length check and meets the table).
#[cfg(test)]
pub(crate) fn corruptions(good: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let table_end = HEADER + (u32_at(good, 12) as usize).min(MAX_SECTIONS) * ENTRY;
    for i in 0..table_end.min(good.len()) {
        let mut b = good.to_vec();
        b[i] ^= 0xA5;
        out.push(b);
    }
    let stride = (good.len() / 1500).max(1);
    for i in (table_end..good.len()).step_by(stride) {
        for x in [0x5A, 0x80] {
            let mut b = good.to_vec();
            b[i] ^= x;
            out.push(b);
        }
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for k in 0..400 {
        let mut b = good.to_vec();
        let i = (next() % good.len() as u64) as usize;
        b[i] = if k % 2 == 0 { next() as u8 } else { 0xFF };
        out.push(b);
    }
    let c = Container::open(good, good[..8].try_into().unwrap_or_default(), u32_at(good, 8));
    let mut cuts: Vec<usize> = Vec::new();
    if let Ok(c) = c {
        for i in 0..c.count {
            let (_, off, n) = c.entry(i);
            cuts.extend([off as usize, (off + n) as usize, (off + n / 2) as usize]);
        }
    }
    cuts.extend([0, 8, HEADER, table_end]);
    for cut in cuts.into_iter().filter(|&c| c < good.len()) {
        out.push(good[..cut].to_vec());
        let mut patched = good[..cut].to_vec();
        if patched.len() >= HEADER {
            patched[16..24].copy_from_slice(&(cut as u64).to_le_bytes());
        }
        out.push(patched);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAGIC: [u8; 8] = *b"KBTEST\0\0";

    fn sample() -> AlignedBytes {
        let mut w = Writer::new(MAGIC, 3);
        w.add_f32("floats", &[1.0, 2.5, -3.0]);
        w.add("raw", b"hello".to_vec());
        w.add_i8("ints", &[-1, 2, -3]);
        AlignedBytes::new(&w.finish())
    }

    #[test]
    fn round_trip() {
        let b = sample();
        let c = Container::open(b.as_slice(), MAGIC, 3).unwrap();
        assert_eq!(c.names(), vec!["floats", "raw", "ints"]);
        assert_eq!(c.f32s("floats").unwrap(), &[1.0, 2.5, -3.0]);
        assert_eq!(c.bytes("raw").unwrap(), b"hello");
        assert_eq!(c.exact::<i8>("ints", 3).unwrap(), &[-1, 2, -3]);
        assert!(matches!(c.exact::<i8>("ints", 4), Err(ContainerError::Shape { .. })));
        assert_eq!(c.bytes("nope"), Err(ContainerError::Missing("nope".into())));
    }

    #[test]
    fn corrupt_input_is_an_error_not_a_panic() {
        let good = sample().as_slice().to_vec();
        assert!(matches!(Container::open(&good[..10], MAGIC, 3), Err(ContainerError::TooShort { .. })));
        assert!(matches!(Container::open(&good, *b"KBOTHER\0", 3), Err(ContainerError::BadMagic { .. })));
        assert!(matches!(Container::open(&good, MAGIC, 4), Err(ContainerError::Version { expected: 4, found: 3 })));
        assert!(matches!(Container::open(&good[..good.len() - 1], MAGIC, 3), Err(ContainerError::Truncated { .. })));
        let mut bad = good.clone();
        bad[HEADER + NAME..HEADER + NAME + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert!(matches!(Container::open(&bad, MAGIC, 3), Err(ContainerError::BadTable(_))));
        let mut bad = good.clone();
        bad[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(Container::open(&bad, MAGIC, 3), Err(ContainerError::BadTable(_))));
        // Every single-byte corruption of the header and table is handled.
        for i in 0..HEADER + 3 * ENTRY {
            let mut bad = good.clone();
            bad[i] ^= 0xA5;
            if let Ok(c) = Container::open(&bad, MAGIC, 3) {
                for n in c.names() {
                    let _ = c.bytes(&n);
                    let _ = c.f32s(&n);
                }
            }
        }
    }

    #[test]
    fn misaligned_views_are_refused() {
        let b = sample();
        let mut shifted = vec![0u8; b.as_slice().len() + 1];
        shifted[1..].copy_from_slice(b.as_slice());
        let c = Container::open(&shifted[1..], MAGIC, 3).unwrap();
        assert!(matches!(c.f32s("floats"), Err(ContainerError::Misaligned { .. })));
        assert_eq!(c.bytes("raw").unwrap(), b"hello");
    }
}
