//! Input files: mapped when they are regular files, read otherwise, and copied from by
//! ranges ([`CopySource`]) without holding the bytes in memory.

use std::fs::File;
use std::io::{self, Read, Write};

use super::os_path;

/// The bytes of an input file: mapped when it is a regular file, read otherwise.
#[derive(Debug)]
pub enum InputData {
    /// A memory-mapped regular file.
    Mapped(memmap2::Mmap),
    /// Bytes read from standard input or a special file.
    Owned(Vec<u8>),
    /// A regular file opened only to be copied from (see [`Input::open_unmapped`]):
    /// its bytes are not in memory and read as empty here.
    Unmapped,
}

impl std::ops::Deref for InputData {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            InputData::Mapped(m) => m,
            InputData::Owned(v) => v,
            InputData::Unmapped => &[],
        }
    }
}

/// An opened input: its bytes, and the file itself when there is one (for copies
/// that go through the kernel).
#[derive(Debug)]
pub struct Input {
    /// The file, when the input is a regular file.
    pub file: Option<File>,
    /// Its contents.
    pub data: InputData,
    len: u64,
}

impl Input {
    /// Opens `path` (or standard input for `-`) for copying only: a regular file is
    /// not mapped, since it is copied by positioned reads ([`Input::copy_range`]); read its first
    /// bytes with [`Input::head`]. Other inputs are read into memory as by [`Input::open`].
    pub fn open_unmapped(path: &str) -> io::Result<Input> {
        Input::open_with(path, false)
    }

    /// Up to `n` bytes from the start of the input (for recognizing its format).
    pub fn head(&self, n: usize) -> io::Result<Vec<u8>> {
        match (&self.data, &self.file) {
            (InputData::Unmapped, Some(f)) => {
                let mut buf = vec![0; n.min(self.len as usize)];
                read_exact_at(f, &mut buf, 0)?;
                Ok(buf)
            }
            (data, _) => Ok(data[..n.min(data.len())].to_vec()),
        }
    }

    /// Opens `path`, or standard input for `-`.
    pub fn open(path: &str) -> io::Result<Input> {
        Input::open_with(path, true)
    }

    fn open_with(path: &str, map: bool) -> io::Result<Input> {
        if path == "-" {
            let mut v = Vec::new();
            io::stdin().lock().read_to_end(&mut v)?;
            return Ok(Input::owned(v));
        }
        let file = File::open(os_path(path))?;
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(21)); // EISDIR, as LLVM reports it
        }
        if meta.is_file() && !map {
            return Ok(Input {
                file: Some(file),
                data: InputData::Unmapped,
                len: meta.len(),
            });
        }
        if meta.is_file() {
            if meta.len() == 0 {
                return Ok(Input {
                    file: Some(file),
                    data: InputData::Owned(Vec::new()),
                    len: 0,
                });
            }
            // SAFETY: the mapping is read-only and private to this process. A file
            // truncated by another process while mapped can fault; this is the same
            // trade-off ripgrep and LLVM's MemoryBuffer make for regular files.
            let mapping = unsafe { memmap2::Mmap::map(&file)? };
            return Ok(Input {
                file: Some(file),
                len: mapping.len() as u64,
                data: InputData::Mapped(mapping),
            });
        }
        let mut v = Vec::new();
        (&file).read_to_end(&mut v)?;
        Ok(Input::owned(v))
    }

    /// An input held in memory (a decompressed bundle, for example).
    pub fn from_vec(v: Vec<u8>) -> Input {
        Input::owned(v)
    }

    fn owned(v: Vec<u8>) -> Input {
        Input {
            file: None,
            len: v.len() as u64,
            data: InputData::Owned(v),
        }
    }

    /// The input read whole into memory and its file closed, when it is an unmapped regular
    /// file of at most `max` bytes (one open per small input instead of two); `self`
    /// otherwise.
    pub fn into_memory_if_small(self, max: u64) -> io::Result<Input> {
        if matches!(self.data, InputData::Unmapped) && self.len <= max {
            return Ok(Input::owned(self.head(self.len as usize)?));
        }
        Ok(self)
    }

    /// Length of the input in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the input is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `len` bytes starting at `offset` into `out` at its current position.
    ///
    /// Regular files are read in 1 MiB pieces into a buffer kept per thread and written
    /// from there (positioned reads, so several threads may copy from one input at once);
    /// other inputs are written from memory. On ext4 this is about a third faster than
    /// `copy_file_range`, whose splice moves 64 KiB at a time, and faster than writing
    /// from a mapping, which faults every page in first (`cargo bench --bench bundler`).
    pub fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len());
        let Some(end) = end else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "range past the end of the input",
            ));
        };
        match &self.file {
            Some(f) => copy_by_reads(f, offset, end, out),
            None => out.write_all(&self.data[offset as usize..end as usize]),
        }
    }
}

/// Size of the per-thread buffer that file copies go through: large enough that each
/// write fills whole large folios, small enough to stay in the CPU's cache.
const COPY_BUFFER: usize = 1 << 20;

/// Copies bytes `pos..end` of `f` to `out` through the calling thread's copy buffer.
fn copy_by_reads(f: &File, mut pos: u64, end: u64, out: &mut File) -> io::Result<()> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buf| {
        let mut buf = buf.borrow_mut();
        if buf.len() < COPY_BUFFER {
            buf.resize(COPY_BUFFER, 0);
        }
        while pos < end {
            let k = (end - pos).min(COPY_BUFFER as u64) as usize;
            read_exact_at(f, &mut buf[..k], pos).map_err(|e| {
                if e.kind() == io::ErrorKind::UnexpectedEof {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "input changed while it was read",
                    )
                } else {
                    e
                }
            })?;
            out.write_all(&buf[..k])?;
            pos += k as u64;
        }
        Ok(())
    })
}

/// Bytes that can be copied into files by range: a mapped or unmapped [`Input`], or bytes
/// in memory ([`Memory`], a decompressed bundle).
pub trait CopySource: Sync {
    /// Length in bytes.
    fn len(&self) -> u64;

    /// Whether there are no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies `len` bytes starting at `offset` into `out` at its current position.
    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()>;

    /// Whether copies into several files gain from running on several threads (kernel
    /// copies do; writes from memory that another thread is still hashing do not).
    fn parallel_copies(&self) -> bool {
        true
    }
}

impl CopySource for Input {
    fn len(&self) -> u64 {
        Input::len(self)
    }

    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        Input::copy_range(self, offset, len, out)
    }
}

/// Bytes in memory as a [`CopySource`].
#[derive(Clone, Copy, Debug)]
pub struct Memory<'a>(pub &'a [u8]);

impl CopySource for Memory<'_> {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn parallel_copies(&self) -> bool {
        false
    }

    fn copy_range(&self, offset: u64, len: u64, out: &mut File) -> io::Result<()> {
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some(o..o.checked_add(l)?))
            .filter(|r| r.end <= self.0.len());
        match range {
            Some(r) => out.write_all(&self.0[r]),
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "range past the end of the input",
            )),
        }
    }
}

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(f: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match f.seek_read(buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::fileio::error_text;

    #[test]
    fn inputs_map_and_copy_ranges() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("in");
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        fs::write(&p, &data).unwrap();
        let input = Input::open(p.to_str().unwrap()).unwrap();
        assert_eq!(&*input.data, &data[..]);
        let unmapped = Input::open_unmapped(p.to_str().unwrap()).unwrap();
        assert_eq!(unmapped.len(), data.len() as u64);
        assert_eq!(unmapped.head(4).unwrap(), &data[..4]);
        let mut v = Vec::new();
        let r = dir.path().join("via-pread");
        let mut rf = File::create(&r).unwrap();
        unmapped.copy_range(7, 100_000, &mut rf).unwrap();
        drop(rf);
        v.extend(fs::read(&r).unwrap());
        assert_eq!(v, &data[7..100_007]);
        let q = dir.path().join("out");
        let mut f = File::create(&q).unwrap();
        input.copy_range(1000, 150_000, &mut f).unwrap();
        input.copy_range(5, 10, &mut f).unwrap();
        drop(f);
        let got = fs::read(&q).unwrap();
        assert_eq!(&got[..150_000], &data[1000..151_000]);
        assert_eq!(&got[150_000..], &data[5..15]);
        assert_eq!(
            error_text(&Input::open("/nonexistent").unwrap_err()),
            "No such file or directory"
        );
        assert_eq!(error_text(&Input::open("/").unwrap_err()), "Is a directory");
    }
}
