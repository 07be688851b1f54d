//! The NBD protocol, server side: the fixed newstyle handshake, option
//! haggling and the transmission phase's simple replies, named as in the
//! protocol's specification (`doc/proto.md` of the NetworkBlockDevice/nbd
//! repository; section names in the doc comments below).
//!
//! Written here rather than taken from the `nbd` crate (0.3): that crate
//! serves a `Read + Write + Seek` backend with no hook per request, which is
//! where the simulated device must see each request and decide its reply
//! time; and it has no `NBD_OPT_GO`/`NBD_OPT_INFO` or block-size
//! constraints, which qemu and libnbd ask for.
//!
//! What this server does not offer (each refused with `NBD_REP_ERR_UNSUP`
//! as the specification asks, so a client falls back): TLS
//! (`NBD_OPT_STARTTLS`), structured replies, metadata contexts (so no
//! `NBD_CMD_BLOCK_STATUS`), extended headers. `NBD_CMD_CACHE` and
//! `NBD_CMD_RESIZE` are not advertised and answered `EINVAL`.

use std::io::{self, Read, Write};

/// "Newstyle negotiation": the first 8 bytes the server sends.
pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
/// "Newstyle negotiation": the option magic (`IHAVEOPT`).
pub const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
/// "Option haggling": the magic of an option reply.
pub const REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
/// "Transmission": the magic of a request.
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
/// "Simple reply message": its magic.
pub const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

/// Handshake flags ("Handshake flags").
pub const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
pub const FLAG_NO_ZEROES: u16 = 1 << 1;
/// Client flags ("Client flags").
pub const FLAG_C_FIXED_NEWSTYLE: u32 = 1 << 0;
pub const FLAG_C_NO_ZEROES: u32 = 1 << 1;

/// Transmission flags ("Transmission flags").
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Options ("Option types").
pub const OPT_EXPORT_NAME: u32 = 1;
pub const OPT_ABORT: u32 = 2;
pub const OPT_LIST: u32 = 3;
pub const OPT_INFO: u32 = 6;
pub const OPT_GO: u32 = 7;

/// Option reply types ("Option reply types").
pub const REP_ACK: u32 = 1;
pub const REP_SERVER: u32 = 2;
pub const REP_INFO: u32 = 3;
pub const REP_ERR_UNSUP: u32 = (1 << 31) | 1;
pub const REP_ERR_INVALID: u32 = (1 << 31) | 3;
pub const REP_ERR_UNKNOWN: u32 = (1 << 31) | 6;

/// Information types of `NBD_REP_INFO` ("Option reply types").
pub const INFO_EXPORT: u16 = 0;
pub const INFO_NAME: u16 = 1;
pub const INFO_DESCRIPTION: u16 = 2;
pub const INFO_BLOCK_SIZE: u16 = 3;

/// Request types ("Request types").
pub const CMD_READ: u16 = 0;
pub const CMD_WRITE: u16 = 1;
pub const CMD_DISC: u16 = 2;
pub const CMD_FLUSH: u16 = 3;
pub const CMD_TRIM: u16 = 4;
pub const CMD_WRITE_ZEROES: u16 = 6;

/// Command flags ("Command flags").
pub const CMD_FLAG_FUA: u16 = 1 << 0;

/// Error values ("Error values").
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const EOVERFLOW: u32 = 75;

/// The longest option data accepted; longer is a protocol error (an export
/// name is at most 4096 bytes, "Option haggling").
pub const MAX_OPTION_LEN: u32 = 64 * 1024;
/// The most options one handshake may send before the server gives up
/// (a client looping on errors would otherwise never end).
pub const MAX_OPTIONS: u32 = 1024;

/// The export as the handshake describes it.
#[derive(Clone, Debug)]
pub struct ExportInfo {
    /// Its name; clients may also ask for the default export (`""`).
    pub name: String,
    pub description: String,
    /// Size in bytes.
    pub size: u64,
    /// "Block size constraints": minimum, preferred and maximum payload.
    pub min_block: u32,
    pub preferred_block: u32,
    pub max_block: u32,
}

impl ExportInfo {
    /// The transmission flags this server sends.
    pub fn transmission_flags(&self) -> u16 {
        FLAG_HAS_FLAGS | FLAG_SEND_FLUSH | FLAG_SEND_FUA | FLAG_SEND_TRIM | FLAG_SEND_WRITE_ZEROES | FLAG_CAN_MULTI_CONN
    }

    fn is_named(&self, name: &[u8]) -> bool {
        name.is_empty() || name == self.name.as_bytes()
    }
}

/// The preferred block size to advertise for pages of `page` bytes: the
/// page itself when it is a power of two, else the largest power of two
/// that divides it (4 KiB for a 12 KiB page), so that a page is still a
/// whole number of preferred blocks. "Block size constraints": the
/// preferred block size "MUST be a power of 2"; qemu refuses an export
/// whose is not (`server preferred block size 12288 is not valid`), and
/// `geometry.page_size` may be any multiple of 4 KiB.
pub fn preferred_block(page: u32) -> u32 {
    1 << page.trailing_zeros()
}

/// How a handshake ended.
#[derive(Debug)]
pub enum Handshake {
    /// Transmission begins.
    Go,
    /// The client aborted (`NBD_OPT_ABORT`) or left.
    Closed,
}

/// A protocol error that ends the connection (the reason is logged).
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("bad magic {got:#x} ({what})")]
    BadMagic { what: &'static str, got: u64 },
    #[error("unknown client flags {0:#x}")]
    ClientFlags(u32),
    #[error("option {option} data of {len} bytes (at most {MAX_OPTION_LEN})")]
    OptionTooLong { option: u32, len: u32 },
    #[error("more than {MAX_OPTIONS} options in one handshake")]
    TooManyOptions,
    #[error("a payload of {0} bytes, beyond what the server accepts")]
    PayloadTooLarge(u32),
}

fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

/// Sends one option reply ("Option reply").
fn option_reply(w: &mut impl Write, option: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut m = Vec::with_capacity(20 + data.len());
    m.extend_from_slice(&REPLY_MAGIC.to_be_bytes());
    m.extend_from_slice(&option.to_be_bytes());
    m.extend_from_slice(&kind.to_be_bytes());
    m.extend_from_slice(&(data.len() as u32).to_be_bytes());
    m.extend_from_slice(data);
    w.write_all(&m)
}

/// Runs the fixed newstyle handshake ("Fixed newstyle negotiation") for
/// one export. Malformed options get an error reply and haggling goes on;
/// a broken frame (bad magic, oversized data, unknown client flags) is a
/// [`ProtocolError`] after which the connection is closed.
pub fn handshake<S: Read + Write>(s: &mut S, export: &ExportInfo) -> Result<Handshake, ProtocolError> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    s.write_all(&hello)?;
    s.flush()?;
    let client = read_u32(s)?;
    if client & !(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES) != 0 {
        return Err(ProtocolError::ClientFlags(client));
    }
    let no_zeroes = client & FLAG_C_NO_ZEROES != 0;
    for _ in 0..MAX_OPTIONS {
        let magic = match read_u64(s) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(Handshake::Closed),
            Err(e) => return Err(e.into()),
        };
        if magic != IHAVEOPT {
            return Err(ProtocolError::BadMagic { what: "option", got: magic });
        }
        let option = read_u32(s)?;
        let len = read_u32(s)?;
        if len > MAX_OPTION_LEN {
            return Err(ProtocolError::OptionTooLong { option, len });
        }
        let mut data = vec![0; len as usize];
        s.read_exact(&mut data)?;
        match option {
            OPT_EXPORT_NAME => {
                // No reply on error is possible here: close instead.
                if !export.is_named(&data) {
                    return Ok(Handshake::Closed);
                }
                let mut m = Vec::with_capacity(134);
                m.extend_from_slice(&export.size.to_be_bytes());
                m.extend_from_slice(&export.transmission_flags().to_be_bytes());
                if !no_zeroes {
                    m.extend_from_slice(&[0; 124]);
                }
                s.write_all(&m)?;
                s.flush()?;
                return Ok(Handshake::Go);
            }
            OPT_ABORT => {
                // "the server SHOULD send NBD_REP_ACK"; the client may be gone.
                let _ = option_reply(s, option, REP_ACK, &[]).and_then(|_| s.flush());
                return Ok(Handshake::Closed);
            }
            OPT_LIST => {
                if !data.is_empty() {
                    option_reply(s, option, REP_ERR_INVALID, b"NBD_OPT_LIST takes no data")?;
                } else {
                    let mut d = (export.name.len() as u32).to_be_bytes().to_vec();
                    d.extend_from_slice(export.name.as_bytes());
                    d.extend_from_slice(export.description.as_bytes());
                    option_reply(s, option, REP_SERVER, &d)?;
                    option_reply(s, option, REP_ACK, &[])?;
                }
            }
            OPT_INFO | OPT_GO => match parse_info_request(&data) {
                None => option_reply(s, option, REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO data")?,
                Some((name, _)) if !export.is_named(name) => {
                    option_reply(s, option, REP_ERR_UNKNOWN, b"no such export")?
                }
                Some((_, wanted)) => {
                    let mut info = INFO_EXPORT.to_be_bytes().to_vec();
                    info.extend_from_slice(&export.size.to_be_bytes());
                    info.extend_from_slice(&export.transmission_flags().to_be_bytes());
                    option_reply(s, option, REP_INFO, &info)?;
                    // Block sizes are always sent: a client that did not ask
                    // may ignore them ("NBD_INFO_BLOCK_SIZE").
                    let mut b = INFO_BLOCK_SIZE.to_be_bytes().to_vec();
                    for v in [export.min_block, export.preferred_block, export.max_block] {
                        b.extend_from_slice(&v.to_be_bytes());
                    }
                    option_reply(s, option, REP_INFO, &b)?;
                    if wanted.contains(&INFO_NAME) {
                        let mut n = INFO_NAME.to_be_bytes().to_vec();
                        n.extend_from_slice(export.name.as_bytes());
                        option_reply(s, option, REP_INFO, &n)?;
                    }
                    if wanted.contains(&INFO_DESCRIPTION) {
                        let mut n = INFO_DESCRIPTION.to_be_bytes().to_vec();
                        n.extend_from_slice(export.description.as_bytes());
                        option_reply(s, option, REP_INFO, &n)?;
                    }
                    option_reply(s, option, REP_ACK, &[])?;
                    if option == OPT_GO {
                        s.flush()?;
                        return Ok(Handshake::Go);
                    }
                }
            },
            _ => option_reply(s, option, REP_ERR_UNSUP, b"option not supported by dedupsim serve")?,
        }
        s.flush()?;
    }
    Err(ProtocolError::TooManyOptions)
}

/// The export name and the information types of `NBD_OPT_INFO`/`GO` data:
/// `u32` name length, name, `u16` count, `u16` types.
fn parse_info_request(d: &[u8]) -> Option<(&[u8], Vec<u16>)> {
    let n = u32::from_be_bytes(d.get(..4)?.try_into().ok()?) as usize;
    let name = d.get(4..4usize.checked_add(n)?)?;
    let rest = &d[4 + n..];
    let count = u16::from_be_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    let types = rest.get(2..)?;
    if types.len() != count * 2 {
        return None;
    }
    Some((name, types.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect()))
}

/// One transmission request's header ("Request message").
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub flags: u16,
    pub kind: u16,
    pub handle: u64,
    pub offset: u64,
    pub length: u32,
}

/// Reads the next request header; `Ok(None)` at a clean end of stream
/// between requests. A bad magic is a [`ProtocolError`] ("the server
/// MUST... terminate the connection").
pub fn read_request(r: &mut impl Read) -> Result<Option<Request>, ProtocolError> {
    let mut h = [0u8; 28];
    let mut got = 0;
    while got < h.len() {
        match r.read(&mut h[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    let magic = u32::from_be_bytes(h[0..4].try_into().expect("4 bytes"));
    if magic != REQUEST_MAGIC {
        return Err(ProtocolError::BadMagic { what: "request", got: u64::from(magic) });
    }
    Ok(Some(Request {
        flags: u16::from_be_bytes([h[4], h[5]]),
        kind: u16::from_be_bytes([h[6], h[7]]),
        handle: u64::from_be_bytes(h[8..16].try_into().expect("8 bytes")),
        offset: u64::from_be_bytes(h[16..24].try_into().expect("8 bytes")),
        length: u32::from_be_bytes(h[24..28].try_into().expect("4 bytes")),
    }))
}

/// Sends a simple reply ("Simple reply message"), with `data` for a
/// successful read.
pub fn simple_reply(w: &mut impl Write, handle: u64, error: u32, data: &[u8]) -> io::Result<()> {
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    h[4..8].copy_from_slice(&error.to_be_bytes());
    h[8..16].copy_from_slice(&handle.to_be_bytes());
    w.write_all(&h)?;
    if error == 0 {
        w.write_all(data)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A duplex stream: reads from `input`, collects what is written.
    struct Duplex {
        input: Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Duplex {
        fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
            self.input.read(b)
        }
    }

    impl Write for Duplex {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.output.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn export() -> ExportInfo {
        ExportInfo {
            name: "dedupsim".into(),
            description: "d".into(),
            size: 1 << 20,
            min_block: 1,
            preferred_block: 4096,
            max_block: 1 << 25,
        }
    }

    fn option(kind: u32, data: &[u8]) -> Vec<u8> {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        m
    }

    fn go_data(name: &str) -> Vec<u8> {
        let mut d = (name.len() as u32).to_be_bytes().to_vec();
        d.extend_from_slice(name.as_bytes());
        d.extend_from_slice(&1u16.to_be_bytes());
        d.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
        d
    }

    /// The option replies in `out` after the 18-byte greeting: (option, type, data).
    fn replies(out: &[u8]) -> Vec<(u32, u32, Vec<u8>)> {
        let mut v = Vec::new();
        let mut i = 18;
        while i + 20 <= out.len() {
            assert_eq!(u64::from_be_bytes(out[i..i + 8].try_into().unwrap()), REPLY_MAGIC);
            let opt = u32::from_be_bytes(out[i + 8..i + 12].try_into().unwrap());
            let kind = u32::from_be_bytes(out[i + 12..i + 16].try_into().unwrap());
            let len = u32::from_be_bytes(out[i + 16..i + 20].try_into().unwrap()) as usize;
            v.push((opt, kind, out[i + 20..i + 20 + len].to_vec()));
            i += 20 + len;
        }
        v
    }

    #[test]
    fn go_after_unknown_options_lists_and_bad_names() {
        let mut input = (FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES).to_be_bytes().to_vec();
        input.extend(option(8, &[])); // structured replies: unsupported
        input.extend(option(OPT_LIST, &[]));
        input.extend(option(OPT_GO, &go_data("nope")));
        input.extend(option(OPT_GO, &[1, 2])); // malformed
        input.extend(option(OPT_GO, &go_data("")));
        let mut s = Duplex { input: Cursor::new(input), output: Vec::new() };
        assert!(matches!(handshake(&mut s, &export()).unwrap(), Handshake::Go));
        assert_eq!(&s.output[..8], &NBDMAGIC.to_be_bytes());
        let r = replies(&s.output);
        let kinds: Vec<u32> = r.iter().map(|x| x.1).collect();
        assert_eq!(
            kinds,
            vec![REP_ERR_UNSUP, REP_SERVER, REP_ACK, REP_ERR_UNKNOWN, REP_ERR_INVALID, REP_INFO, REP_INFO, REP_ACK]
        );
        // NBD_INFO_EXPORT: size and flags.
        assert_eq!(&r[5].2[..2], &INFO_EXPORT.to_be_bytes());
        assert_eq!(u64::from_be_bytes(r[5].2[2..10].try_into().unwrap()), 1 << 20);
        // NBD_INFO_BLOCK_SIZE: 1, 4096, 32 MiB.
        assert_eq!(&r[6].2[2..], &[0, 0, 0, 1, 0, 0, 16, 0, 2, 0, 0, 0]);
    }

    #[test]
    fn export_name_without_no_zeroes_pads_124_bytes() {
        let mut input = FLAG_C_FIXED_NEWSTYLE.to_be_bytes().to_vec();
        input.extend(option(OPT_EXPORT_NAME, b"dedupsim"));
        let mut s = Duplex { input: Cursor::new(input), output: Vec::new() };
        assert!(matches!(handshake(&mut s, &export()).unwrap(), Handshake::Go));
        assert_eq!(s.output.len(), 18 + 8 + 2 + 124);
    }

    #[test]
    fn broken_frames_are_errors_and_abort_closes() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![0, 0, 0, 4], "unknown client flags"),
            ([1u32.to_be_bytes().to_vec(), vec![0; 16]].concat(), "bad magic"),
            (
                [1u32.to_be_bytes().to_vec(), option(OPT_GO, &[])[..12].to_vec(), vec![0xff; 4]].concat(),
                "bytes (at most",
            ),
        ];
        for (input, want) in cases {
            let mut s = Duplex { input: Cursor::new(input), output: Vec::new() };
            let e = handshake(&mut s, &export()).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
        let input = [1u32.to_be_bytes().to_vec(), option(OPT_ABORT, &[])].concat();
        let mut s = Duplex { input: Cursor::new(input), output: Vec::new() };
        assert!(matches!(handshake(&mut s, &export()).unwrap(), Handshake::Closed));
        // A client gone mid-handshake: closed, not an error.
        let mut s = Duplex { input: Cursor::new(1u32.to_be_bytes().to_vec()), output: Vec::new() };
        assert!(matches!(handshake(&mut s, &export()).unwrap(), Handshake::Closed));
    }

    #[test]
    fn requests_parse_and_bad_magic_is_an_error() {
        let mut m = REQUEST_MAGIC.to_be_bytes().to_vec();
        m.extend_from_slice(&CMD_FLAG_FUA.to_be_bytes());
        m.extend_from_slice(&CMD_WRITE.to_be_bytes());
        m.extend_from_slice(&7u64.to_be_bytes());
        m.extend_from_slice(&4096u64.to_be_bytes());
        m.extend_from_slice(&512u32.to_be_bytes());
        let r = read_request(&mut Cursor::new(m.clone())).unwrap().unwrap();
        assert_eq!(r, Request { flags: 1, kind: CMD_WRITE, handle: 7, offset: 4096, length: 512 });
        assert_eq!(read_request(&mut Cursor::new(Vec::new())).unwrap(), None);
        assert!(read_request(&mut Cursor::new(m[..10].to_vec())).is_err());
        m[0] = 0;
        assert!(read_request(&mut Cursor::new(m)).unwrap_err().to_string().contains("bad magic"));
    }
}
