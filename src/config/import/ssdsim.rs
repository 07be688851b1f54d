//! SSDsim 2.1 parameter files (`page.parameters`): `key = value;` lines.
//!
//! SSDsim reads a line only if it does not start with `#` or a space and
//! has a `=`; the key is the text before `=` (trailing spaces dropped), the
//! value is read with `%d` or `%f` (so `;` and a trailing `#comment` end
//! it); a key it does not know is printed ("don't match") and skipped;
//! `chip number[i]` is channel i's chip count. Fields the import maps:
//! geometry (channels, chips, dies, planes, blocks, pages, page size =
//! `subpage page` x `subpage capacity`), `t_R`, `t_PROG`, `t_BERS`, the bus
//! (`t_WC`, `t_RC` per byte), `overprovide`, `gc hard threshold` (the only
//! threshold SSDsim's GC checks: free pages of a plane below that fraction
//! of its pages), `allocation` / `static_allocation` / `dynamic_allocation`,
//! the copyback bit of `advanced command`, `aged` / `aged ratio`.
//! docs/config-import.md has the full table.

use super::{blocks_of, error, note_duplicates, Draft, Fields, NoteKind, PeerFormat};
use crate::config::parse::{format_time_ns, format_transfer_ps};
use crate::config::ConfigError;

pub struct Ssdsim;

/// SSDsim 2.1 keys it parses but never uses (checked against its sources:
/// no read of the field outside `load_parameters`).
const UNUSED_BY_SSDSIM: &[&str] = &[
    "cpu sdram",
    "page capacity",
    "address mapping",
    "wear leveling",
    "gc",
    "clean in background",
    "gc threshold",
    "buffer management",
    "scheduling algorithm",
    "quick table radio",
    "related mapping",
    "striping",
    "interleaving",
    "pipelining",
    "time_step",
    "small large write",
    "active write threshold",
    "threshold value",
    "advanced command priority",
    "flash operating current",
    "flash supply voltage",
    "dram active current",
    "dram standby current",
    "dram refresh current",
    "dram voltage",
];

/// ONFI signal timings: SSDsim charges a few of them as command/address
/// cycles; dedupsim charges none.
const SIGNAL_TIMINGS: &[&str] = &[
    "t_DBSY", "t_CLS", "t_CLH", "t_CS", "t_CH", "t_WP", "t_ALS", "t_ALH", "t_DS", "t_DH", "t_WH", "t_ADL", "t_AR",
    "t_CLR", "t_RR", "t_RP", "t_WB", "t_REA", "t_CEA", "t_RHZ", "t_CHZ", "t_RHOH", "t_RLOH", "t_COH", "t_REH", "t_IR",
    "t_RHW", "t_WHR", "t_RST",
];

/// `static_allocation` modes 0-5 as static orders (SSDsim `flash.c`,
/// `allocate_location`): docs/simulator.md, "Static allocation".
const STATIC_ORDERS: [&str; 6] = ["WDPC", "CWDP", "CPWD", "CDWP", "CPDW", "CDPW"];

/// The `advanced command` bit for copyback (SSDsim's `AD_COPYBACK`).
const AD_COPYBACK: i64 = 0b10;

impl PeerFormat for Ssdsim {
    fn detect(&self, text: &str) -> bool {
        let mut keys = 0;
        for line in text.lines() {
            let t = line.trim_start_matches('\u{feff}').trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if t.starts_with('<') {
                return false;
            }
            if let Some((k, _)) = t.split_once('=') {
                if matches!(k.trim(), "channel number" | "chip number" | "page number" | "block number") {
                    keys += 1;
                }
            }
        }
        keys > 0
    }

    fn read(&self, text: &str, origin: &str) -> Result<Draft, ConfigError> {
        let mut d = Draft::new("SSDsim 2.1");
        let mut f = Fields::default();
        let mut per_channel: Vec<(usize, usize, i64)> = Vec::new(); // (channel, line, chips)
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let raw = if i == 0 { raw.trim_start_matches('\u{feff}') } else { raw };
            if raw.starts_with('#') || raw.trim().is_empty() {
                continue;
            }
            let Some((key, value)) = raw.split_once('=') else {
                d.note(NoteKind::NoEffect, Some(line), format!("`{}`", raw.trim()), "no `=`: SSDsim skips the line");
                continue;
            };
            if raw.starts_with(' ') {
                d.note(
                    NoteKind::NoEffect,
                    Some(line),
                    format!("`{}`", raw.trim()),
                    "the line starts with a space, so SSDsim skips it (not imported either)",
                );
                continue;
            }
            let key = key.trim_end();
            // the value as %d/%f read it: up to `;` or a comment
            let value = value.split([';', '#']).next().unwrap_or("").trim();
            if let Some(idx) = key.strip_prefix("chip number[").and_then(|r| r.strip_suffix(']')) {
                let ch: usize = idx
                    .trim()
                    .parse()
                    .map_err(|_| error(origin, Some(line), format!("`{key}`: the channel index is not a number")))?;
                per_channel.push((ch, line, int(origin, line, key, value)?));
                continue;
            }
            f.push(key, line, value);
        }
        note_duplicates(&mut d, &f);

        // ---- geometry
        let (ch_line, channels) = required(&mut f, origin, "channel number")?;
        let (chips_line, chips) = required(&mut f, origin, "chip number")?;
        positive(origin, ch_line, "channel number", channels)?;
        positive(origin, chips_line, "chip number", chips)?;
        if chips % channels != 0 {
            return Err(error(
                origin,
                Some(chips_line),
                format!(
                    "chip number = {chips} is not a multiple of channel number = {channels}: dedupsim needs the \
                     same number of chips on every channel"
                ),
            ));
        }
        let per = chips / channels;
        for &(c, line, n) in &per_channel {
            let expect = if (c as i64) < channels { per } else { 0 };
            if n != expect {
                return Err(error(
                    origin,
                    Some(line),
                    format!(
                        "chip number[{c}] = {n}, but chip number / channel number = {chips} / {channels} gives \
                         {expect} for this channel: dedupsim needs the same number of chips on every channel (and \
                         none beyond channel number)"
                    ),
                ));
            }
        }
        if per_channel.iter().filter(|(c, _, _)| (*c as i64) < channels).count() < channels as usize {
            return Err(error(
                origin,
                Some(ch_line),
                format!(
                    "channel number = {channels}, but not every channel has a `chip number[i]` line (SSDsim builds \
                     its channels from them)"
                ),
            ));
        }
        d.set("geometry", "channels", channels.to_string(), format!("channel number (line {ch_line})"));
        d.set(
            "geometry",
            "chips_per_channel",
            per.to_string(),
            format!("chip number / channel number (line {chips_line}; chip number[i], one line per channel)"),
        );
        for (key, field) in [
            ("dies_per_chip", "die number"),
            ("planes_per_die", "plane number"),
            ("blocks_per_plane", "block number"),
            ("pages_per_block", "page number"),
        ] {
            let (line, v) = required(&mut f, origin, field)?;
            positive(origin, line, field, v)?;
            d.set("geometry", key, v.to_string(), format!("{field} (line {line})"));
        }
        let (sp_line, subpages) = required(&mut f, origin, "subpage page")?;
        let (sc_line, sector) = required(&mut f, origin, "subpage capacity")?;
        positive(origin, sp_line, "subpage page", subpages)?;
        positive(origin, sc_line, "subpage capacity", sector)?;
        let page = subpages * sector;
        if page % 4096 != 0 || page > i64::from(crate::units::MAX_PAGE_SIZE) {
            return Err(error(
                origin,
                Some(sp_line),
                format!(
                    "page size subpage page x subpage capacity = {subpages} x {sector} = {page} bytes: dedupsim \
                     needs a multiple of 4096 bytes (4 KiB content ids), at most 1 MiB"
                ),
            ));
        }
        d.set(
            "geometry",
            "page_size",
            page.to_string(),
            format!("subpage page x subpage capacity (lines {sp_line}, {sc_line}), bytes"),
        );
        if subpages > 1 {
            d.note(
                NoteKind::NotRepresented,
                Some(sp_line),
                format!("subpage page = {subpages}, subpage capacity = {sector}"),
                "SSDsim transfers only the sectors a request covers and reads the old sectors before a \
                 partial-page write; dedupsim moves whole pages (page-aligned traces are unaffected)",
            );
        }

        // ---- timing
        for (key, field) in [("read", "t_R"), ("program", "t_PROG"), ("erase", "t_BERS")] {
            let (line, v) = required(&mut f, origin, field)?;
            positive(origin, line, field, v)?;
            d.set_str("timing", key, &format_time_ns(v as u64), format!("{field} = {v} ns (line {line})"));
        }
        let (wc_line, wc) = required(&mut f, origin, "t_WC")?;
        positive(origin, wc_line, "t_WC", wc)?;
        d.set_str(
            "timing",
            "transfer",
            &format_transfer_ps(wc as u64 * 1000),
            format!("t_WC = {wc} ns per byte on the 8-bit bus (line {wc_line})"),
        );
        if let Some((line, v)) = f.get("t_RC") {
            let rc = int(origin, line, "t_RC", &v)?;
            if rc != wc {
                d.note(
                    NoteKind::NotRepresented,
                    Some(line),
                    format!("t_RC = {rc}"),
                    format!(
                        "SSDsim moves read data at t_RC and written data at t_WC = {wc} ns/B; dedupsim has one bus \
                         rate and takes t_WC"
                    ),
                );
            }
        }
        d.set_str("timing", "scheduling", "read-priority", "model: SSDsim serves a channel's waiting reads first");
        d.set_str(
            "timing",
            "write_completion",
            "transfer",
            "model: SSDsim completes a write page when its data is in the chip's register",
        );
        d.set(
            "timing",
            "duplicate_read_shortcut",
            "false",
            "model: SSDsim completes a read of a page already being read on its channel after 1 us; off here (the \
             data cannot be in the controller before the first read sensed it); true reproduces SSDsim",
        );

        // ---- capacity, GC, allocation
        let (op_line, op) = required_f(&mut f, origin, "overprovide")?;
        if !(0.0..1.0).contains(&op) {
            return Err(error(origin, Some(op_line), format!("overprovide = {op}: must be in [0, 1)")));
        }
        d.set("", "over_provisioning", format!("{op}"), format!("overprovide (line {op_line})"));
        let blocks = f.get("block number").map(|(l, v)| int(origin, l, "block number", &v)).transpose()?.unwrap_or(0);
        let (gc_line, hard) = required_f(&mut f, origin, "gc hard threshold")?;
        if !(0.0..1.0).contains(&hard) {
            return Err(error(origin, Some(gc_line), format!("gc hard threshold = {hard}: must be in [0, 1)")));
        }
        let min_free = blocks_of(hard, blocks as u32, true).max(1);
        d.set(
            "gc",
            "min_free_blocks",
            min_free.to_string(),
            format!(
                "gc hard threshold = {hard} x block number {blocks} (line {gc_line}), rounded up: SSDsim collects when \
                 a plane's free pages fall below that fraction of its pages"
            ),
        );
        d.set_str(
            "gc",
            "rule",
            "one-per-write",
            "model: SSDsim checks the threshold after every page write and queues one greedy victim",
        );
        let adv = f.get("advanced command").map(|(l, v)| int(origin, l, "advanced command", &v).map(|a| (l, a)));
        let (adv_line, adv) = adv.transpose()?.unwrap_or((0, 0));
        let copyback = adv & AD_COPYBACK != 0;
        d.set(
            "gc",
            "copyback",
            copyback.to_string(),
            if adv_line > 0 {
                format!("advanced command = {adv} (line {adv_line}): copyback bit (0b00010) {}", on(copyback))
            } else {
                "advanced command not given (0): no copyback".to_string()
            },
        );
        if adv & !AD_COPYBACK != 0 {
            d.note(
                NoteKind::NotRepresented,
                Some(adv_line),
                format!("advanced command = {adv}"),
                "random, two-plane and interleave commands (bits 0b00001, 0b00100, 0b01000, 0b10000): dedupsim \
                 issues single-plane commands only; the copyback bit is imported",
            );
        }
        for field in ["greed CB command", "greed MPW command", "advanced command priority2"] {
            if let Some((line, v)) = f.get(field) {
                let n = int(origin, line, field, &v)?;
                let matters = match field {
                    "greed CB command" => copyback && n != 0,
                    _ => adv & !AD_COPYBACK != 0 && n != 0,
                };
                let (kind, why) = if matters {
                    (NoteKind::NotRepresented, "a rule for SSDsim's advanced commands, which dedupsim does not model")
                } else {
                    (NoteKind::NoEffect, "only used with advanced commands this file does not enable")
                };
                d.note(kind, Some(line), format!("{field} = {v}"), why);
            }
        }
        d.set(
            "gc",
            "wear_leveling",
            "false",
            "model: SSDsim takes free blocks in order and victims by invalid pages alone (its `wear leveling` field \
             is never used)",
        );
        allocation(&mut d, &mut f, origin)?;

        // ---- what is on the device before the replay
        d.set_str(
            "precondition",
            "rule",
            "all-reads",
            "model: SSDsim's trace pre-processing writes every page the trace reads, before the replay",
        );
        d.set_str(
            "precondition",
            "placement",
            "round-robin",
            "model: ... over the parallel units in order, no policy (static allocation places them by LPN)",
        );
        let aged = f.get("aged").map(|(l, v)| int(origin, l, "aged", &v).map(|a| (l, a))).transpose()?;
        let ratio = f.get("aged ratio").map(|(l, v)| float(origin, l, "aged ratio", &v).map(|r| (l, r))).transpose()?;
        match (aged, ratio) {
            (Some((line, 1)), Some((rline, r))) => {
                if !(0.0..1.0).contains(&r) {
                    return Err(error(origin, Some(rline), format!("aged ratio = {r}: must be in [0, 1)")));
                }
                d.set(
                    "precondition",
                    "aged",
                    format!("{r}"),
                    format!("aged = 1 (line {line}), aged ratio (line {rline})"),
                );
                d.note(
                    NoteKind::NotRepresented,
                    Some(rline),
                    format!("aged ratio = {r}"),
                    "SSDsim invalidates that fraction of each plane's pages spread over blocks (ratio x pages per \
                     block + 1 pages in each); dedupsim makes that fraction of the blocks wholly stale",
                );
            }
            (Some((line, 1)), None) => {
                return Err(error(origin, Some(line), "aged = 1 but no `aged ratio`"));
            }
            (Some((line, a)), _) if a != 0 => {
                return Err(error(origin, Some(line), format!("aged = {a}: SSDsim knows 0 (fresh) and 1 (aged)")));
            }
            (a, r) => {
                let line = a.map(|(l, _)| l);
                d.set(
                    "precondition",
                    "aged",
                    "0.0",
                    match line {
                        Some(l) => format!("aged = 0 (line {l}): a fresh device"),
                        None => "aged not given (0): a fresh device".to_string(),
                    },
                );
                if let Some((rl, r)) = r {
                    d.note(NoteKind::NoEffect, Some(rl), format!("aged ratio = {r}"), "used only with aged = 1");
                }
            }
        }

        // ---- the rest: listed, never dropped silently
        if let Some((line, v)) = f.get("dram capacity") {
            if int(origin, line, "dram capacity", &v)? != 0 {
                d.note(
                    NoteKind::NotRepresented,
                    Some(line),
                    format!("dram capacity = {v}"),
                    "SSDsim's DRAM write buffer: dedupsim has no data buffer (every write goes to flash)",
                );
            }
        }
        if let Some((line, v)) = f.get("queue_length") {
            d.note(
                NoteKind::NotRepresented,
                Some(line),
                format!("queue_length = {v}"),
                "SSDsim holds back trace arrivals while this many requests are outstanding; dedupsim's open-loop \
                 replay issues every request at its time (the same whenever fewer are outstanding)",
            );
        }
        if let Some((line, v)) = f.get("erase limit") {
            d.note(
                NoteKind::NotRepresented,
                Some(line),
                format!("erase limit = {v}"),
                "dedupsim counts erases per block but retires none",
            );
        }
        if let Some((line, v)) = f.get("active write") {
            if int(origin, line, "active write", &v)? != 0 {
                d.note(
                    NoteKind::NotRepresented,
                    Some(line),
                    format!("active write = {v}"),
                    "SSDsim's interruptible (active) GC: dedupsim's GC is not interruptible",
                );
            }
        }
        let mut timings: Vec<(usize, String)> = Vec::new();
        for t in SIGNAL_TIMINGS {
            if let Some((line, v)) = f.get(t) {
                timings.push((line, format!("{t} = {v}")));
            }
        }
        if let Some(first) = timings.first().map(|t| t.0) {
            let list: Vec<String> = timings.into_iter().map(|t| t.1).collect();
            d.note(
                NoteKind::NotRepresented,
                Some(first),
                list.join(", "),
                "ONFI signal timings: SSDsim charges some as command, address and status cycles; dedupsim charges \
                 none (only tR, tPROG, tBERS and the data transfer)",
            );
        }
        for key in UNUSED_BY_SSDSIM {
            if let Some((line, v)) = f.get(key) {
                d.note(NoteKind::NoEffect, Some(line), format!("{key} = {v}"), "SSDsim 2.1 reads it but never uses it");
            }
        }
        for (name, line, v) in f.unused() {
            d.note(
                NoteKind::NoEffect,
                Some(line),
                format!("{name} = {v}"),
                "not an SSDsim 2.1 parameter (SSDsim prints `don't match` and skips it)",
            );
        }
        Ok(d)
    }
}

/// `allocation`, `static_allocation`, `dynamic_allocation`.
fn allocation(d: &mut Draft, f: &mut Fields, origin: &str) -> Result<(), ConfigError> {
    let scheme = f.get("allocation").map(|(l, v)| int(origin, l, "allocation", &v).map(|a| (l, a))).transpose()?;
    let stat = f.get("static_allocation").map(|(l, v)| int(origin, l, "static_allocation", &v).map(|a| (l, a)));
    let dynamic = f.get("dynamic_allocation").map(|(l, v)| int(origin, l, "dynamic_allocation", &v).map(|a| (l, a)));
    let (stat, dynamic) = (stat.transpose()?, dynamic.transpose()?);
    let (line, scheme) = scheme.unwrap_or((0, 0));
    let at = |l: usize| if l > 0 { format!(" (line {l})") } else { " (not given: 0)".to_string() };
    match scheme {
        0 => {
            let (dl, dyn_mode) = dynamic.unwrap_or((0, 0));
            d.set_str(
                "",
                "allocation",
                "dynamic",
                format!(
                    "allocation = 0{}, dynamic_allocation = {dyn_mode}{}: SSDsim's dynamic allocation, a write page \
                     placed when a channel and chip can serve it (policies that place their own pages keep their placement)",
                    at(line),
                    at(dl)
                ),
            );
            if dyn_mode != 0 {
                d.note(
                    NoteKind::NotRepresented,
                    Some(dl),
                    format!("dynamic_allocation = {dyn_mode}"),
                    "SSDsim's channel fixed by LPN with chip, die and plane dynamic: dedupsim's `dynamic` places \
                     every level dynamically",
                );
            }
            if let Some((sl, s)) = stat {
                d.note(
                    NoteKind::NoEffect,
                    Some(sl),
                    format!("static_allocation = {s}"),
                    "used only with allocation = 1",
                );
            }
        }
        1 => {
            let Some((sl, s)) = stat else {
                return Err(error(origin, Some(line), "allocation = 1 (static) but no `static_allocation` mode"));
            };
            let order = usize::try_from(s).ok().and_then(|i| STATIC_ORDERS.get(i)).ok_or_else(|| {
                error(
                    origin,
                    Some(sl),
                    format!("static_allocation = {s}: SSDsim 2.1 implements modes 0-5 (it fails on any other)"),
                )
            })?;
            d.set_str(
                "",
                "allocation",
                &format!("static:{order}"),
                format!(
                    "allocation = 1{}, static_allocation = {s} (line {sl}): striped by LPN, {order} fastest first",
                    at(line)
                ),
            );
            if let Some((dl, v)) = dynamic {
                d.note(
                    NoteKind::NoEffect,
                    Some(dl),
                    format!("dynamic_allocation = {v}"),
                    "used only with allocation = 0",
                );
            }
        }
        other => {
            return Err(error(
                origin,
                Some(line),
                format!("allocation = {other}: SSDsim knows 0 (dynamic) and 1 (static)"),
            ))
        }
    }
    Ok(())
}

fn on(b: bool) -> &'static str {
    if b {
        "set"
    } else {
        "clear"
    }
}

fn int(origin: &str, line: usize, key: &str, v: &str) -> Result<i64, ConfigError> {
    v.parse().map_err(|_| error(origin, Some(line), format!("`{key} = {v}`: expected an integer")))
}

fn float(origin: &str, line: usize, key: &str, v: &str) -> Result<f64, ConfigError> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| error(origin, Some(line), format!("`{key} = {v}`: expected a number")))
}

fn required(f: &mut Fields, origin: &str, key: &str) -> Result<(usize, i64), ConfigError> {
    let (line, v) = f.get(key).ok_or_else(|| error(origin, None, format!("no `{key}` line")))?;
    Ok((line, int(origin, line, key, &v)?))
}

fn required_f(f: &mut Fields, origin: &str, key: &str) -> Result<(usize, f64), ConfigError> {
    let (line, v) = f.get(key).ok_or_else(|| error(origin, None, format!("no `{key}` line")))?;
    Ok((line, float(origin, line, key, &v)?))
}

fn positive(origin: &str, line: usize, key: &str, v: i64) -> Result<(), ConfigError> {
    if v <= 0 || v > i64::from(u32::MAX) {
        return Err(error(origin, Some(line), format!("`{key} = {v}`: must be a positive integer")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::import;

    const MINI: &str = "channel number = 2;\nchip number = 4;\nchip number[0] = 2;\nchip number[1] = 2;\n\
        die number = 1;\nplane number = 2;\nblock number = 64;\npage number = 32;\nsubpage page = 8;\n\
        subpage capacity = 512;\nt_PROG = 200000;\nt_BERS = 1500000;\nt_R = 20000;\nt_WC = 25;\nt_RC = 25;\n\
        overprovide=0.2;\ngc hard threshold=0.125;\nallocation=1;\nstatic_allocation=2;\n";

    #[test]
    fn static_mode_and_threshold() {
        let i = import(MINI, "mini.parameters", None).unwrap();
        assert_eq!(i.format, "ssdsim");
        assert_eq!(i.config.allocation.to_string(), "static:CPWD");
        assert_eq!(i.config.gc.min_free_blocks, 8);
        assert_eq!(i.config.geometry.chips_per_channel, 2);
        assert!(!i.config.gc.copyback);
        // no DRAM line, no queue_length: nothing listed beyond the sectors
        assert!(i.notes.iter().all(|n| n.field.starts_with("subpage page")), "{:?}", i.notes);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = MINI.replace("t_R = 20000;", "t_R = fast;");
        let e = import(&bad, "m.parameters", None).unwrap_err().to_string();
        assert_eq!(e, "m.parameters:13: `t_R = fast`: expected an integer");
        let bad = MINI.replace("chip number[1] = 2;", "chip number[1] = 3;");
        let e = import(&bad, "m.parameters", None).unwrap_err().to_string();
        assert!(e.starts_with("m.parameters:4: chip number[1] = 3"), "{e}");
        let bad = MINI.replace("static_allocation=2;", "static_allocation=6;");
        let e = import(&bad, "m.parameters", None).unwrap_err().to_string();
        assert!(e.starts_with("m.parameters:19: static_allocation = 6"), "{e}");
        let bad = MINI.replace("t_PROG = 200000;\n", "");
        let e = import(&bad, "m.parameters", None).unwrap_err().to_string();
        assert_eq!(e, "m.parameters: no `t_PROG` line");
    }

    #[test]
    fn unknown_and_unrepresented_fields_are_listed() {
        let text = format!("{MINI}dram capacity = 65536;\nflux capacitor = 1;\nadvanced command=31;\n");
        let i = import(&text, "m.parameters", None).unwrap();
        let fields: Vec<&str> = i.notes.iter().map(|n| n.field.as_str()).collect();
        assert!(fields.contains(&"dram capacity = 65536"), "{fields:?}");
        assert!(fields.contains(&"flux capacitor = 1"), "{fields:?}");
        assert!(fields.contains(&"advanced command = 31"), "{fields:?}");
        assert!(i.config.gc.copyback);
        assert!(i.toml.contains("#   line 21: flux capacitor = 1: not an SSDsim 2.1 parameter"), "{}", i.toml);
    }
}
