//! Opening trace files with transparent decompression.
//!
//! Public traces are usually distributed compressed. The compression is
//! recognised from the file's first bytes (gzip `1f 8b`, zstd
//! `28 b5 2f fd`), so a `.gz` or `.zst` file is decompressed whatever its
//! name, and a misnamed plain file still reads. gzip uses
//! [`MultiGzDecoder`] because concatenated gzip members (`cat a.gz b.gz`,
//! `pigz`) are common for large traces and a single-member decoder would
//! silently stop after the first.

use super::TraceError;
use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The compression of a trace file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// Opens `path` for line reading, decompressing gzip and zstd.
pub fn open(path: &Path) -> Result<Box<dyn BufRead>, TraceError> {
    let io_err = |source| TraceError::Io { path: path.to_path_buf(), source };
    let file = File::open(path).map_err(io_err)?;
    decompress(BufReader::with_capacity(1 << 16, file)).map_err(io_err)
}

/// [`open`] for bytes already being read (a file, a pipe, memory): sniffs
/// the compression from the first bytes and wraps the reader in the
/// matching decoder (or returns it as is).
pub fn decompress<'a, R: BufRead + 'a>(mut reader: R) -> std::io::Result<Box<dyn BufRead + 'a>> {
    Ok(match sniff(&mut reader)? {
        Compression::None => Box::new(reader),
        Compression::Gzip => Box::new(BufReader::with_capacity(1 << 16, MultiGzDecoder::new(reader))),
        Compression::Zstd => {
            let dec = zstd::stream::read::Decoder::with_buffer(reader)?;
            Box::new(BufReader::with_capacity(1 << 16, dec))
        }
    })
}

/// Looks at the first bytes without consuming them.
pub fn sniff(reader: &mut impl BufRead) -> std::io::Result<Compression> {
    let head = reader.fill_buf()?;
    Ok(if head.starts_with(&GZIP_MAGIC) {
        Compression::Gzip
    } else if head.starts_with(&ZSTD_MAGIC) {
        Compression::Zstd
    } else {
        Compression::None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn decompress_sniffs_gzip_zstd_and_plain() {
        let text = b"0 0 303567 7 0\n26214000 0 303574 7 1\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let zst = zstd::encode_all(&text[..], 0).unwrap();
        for input in [text.to_vec(), gz, zst] {
            let mut out = Vec::new();
            decompress(&input[..]).unwrap().read_to_end(&mut out).unwrap();
            assert_eq!(out, text);
        }
        // A truncated stream is an error, not a panic.
        let mut out = Vec::new();
        assert!(decompress(&[0x28, 0xb5, 0x2f, 0xfd, 0x00][..]).and_then(|mut r| r.read_to_end(&mut out)).is_err());
    }
}
