//! MQSim device configs (`ssdconfig.xml`): `<Execution_Parameter_Set>` with
//! `<Host_Parameter_Set>` and `<Device_Parameter_Set>` (which holds
//! `<Flash_Parameter_Set>`), one element per field.
//!
//! Fields the import maps: geometry (`Flash_Channel_Count`,
//! `Chip_No_Per_Channel`, `Die_No_Per_Chip`, `Plane_No_Per_Die`,
//! `Block_No_Per_Plane`, `Page_No_Per_Block`, `Page_Capacity`), the page
//! read / program and block erase latencies, the bus
//! (`Channel_Transfer_Rate` MT/s x `Flash_Channel_Width` bytes),
//! `Overprovisioning_Ratio`, `GC_Exec_Threshold` (MQSim collects when a
//! plane's free blocks fall below `(unsigned)(threshold x blocks)`, at least
//! 1), `Use_Copyback_for_GC`, `Dynamic_Wearleveling_Enabled`,
//! `Plane_Allocation_Scheme` (static striping by LPN, e.g. `CWDP`) and
//! `Enabled_Preconditioning` (off: MQSim maps a never-written page on its
//! first read). docs/config-import.md has the full table.

use super::{blocks_of, error, note_duplicates, Draft, Fields, NoteKind, PeerFormat};
use crate::config::parse::format_time_ns;
use crate::config::{ConfigError, StaticOrder};

pub struct Mqsim;

/// Elements that only group fields.
const SETS: &[&str] = &["Execution_Parameter_Set", "Host_Parameter_Set", "Device_Parameter_Set", "Flash_Parameter_Set"];

/// Fields that only shape MQSim's own output.
const OUTPUT_ONLY: &[&str] = &["Enable_ResponseTime_Logging", "ResponseTime_Logging_Period_Length"];

impl PeerFormat for Mqsim {
    fn detect(&self, text: &str) -> bool {
        let t = text.trim_start_matches('\u{feff}').trim_start();
        t.starts_with('<') && (t.contains("<Execution_Parameter_Set") || t.contains("<Device_Parameter_Set"))
    }

    fn read(&self, text: &str, origin: &str) -> Result<Draft, ConfigError> {
        let doc = roxmltree::Document::parse(text).map_err(|e| {
            let p = e.pos();
            error(origin, Some(p.row as usize), format!("not well-formed XML: {e}"))
        })?;
        let root = doc.root_element();
        if !matches!(root.tag_name().name(), "Execution_Parameter_Set" | "Device_Parameter_Set") {
            return Err(error(
                origin,
                Some(doc.text_pos_at(root.range().start).row as usize),
                format!(
                    "root element <{}>: an MQSim device config has <Execution_Parameter_Set> (or \
                     <Device_Parameter_Set>)",
                    root.tag_name().name()
                ),
            ));
        }
        let mut d = Draft::new("MQSim");
        let mut f = Fields::default();
        for node in root.descendants().filter(|n| n.is_element()) {
            let name = node.tag_name().name();
            if SETS.contains(&name) {
                continue;
            }
            let line = doc.text_pos_at(node.range().start).row as usize;
            if node.children().any(|c| c.is_element()) {
                d.note(
                    NoteKind::NoEffect,
                    Some(line),
                    format!("<{name}>"),
                    "an element with elements inside, not an MQSim device field: not imported",
                );
                continue;
            }
            f.push(name, line, node.text().unwrap_or(""));
        }
        note_duplicates(&mut d, &f);
        let mut r = Reader { f, origin };

        // ---- geometry
        for (key, field) in [
            ("channels", "Flash_Channel_Count"),
            ("chips_per_channel", "Chip_No_Per_Channel"),
            ("dies_per_chip", "Die_No_Per_Chip"),
            ("planes_per_die", "Plane_No_Per_Die"),
            ("blocks_per_plane", "Block_No_Per_Plane"),
            ("pages_per_block", "Page_No_Per_Block"),
        ] {
            let (line, v) = r.positive(field)?;
            d.set("geometry", key, v.to_string(), format!("{field} (line {line})"));
        }
        let blocks = r.positive("Block_No_Per_Plane")?.1;
        let (pl, page) = r.positive("Page_Capacity")?;
        if page % 4096 != 0 || page > u64::from(crate::units::MAX_PAGE_SIZE) {
            return Err(error(
                origin,
                Some(pl),
                format!(
                    "Page_Capacity = {page} bytes: dedupsim needs a multiple of 4096 bytes (4 KiB content ids), at \
                     most 1 MiB"
                ),
            ));
        }
        d.set("geometry", "page_size", page.to_string(), format!("Page_Capacity (line {pl}), bytes"));

        // ---- timing
        let tech = r.text("Flash_Technology")?;
        let levels: &[&str] = match tech.1.as_str() {
            "SLC" => &["LSB"],
            "MLC" => &["LSB", "MSB"],
            "TLC" => &["LSB", "CSB", "MSB"],
            other => {
                return Err(error(
                    origin,
                    Some(tech.0),
                    format!("Flash_Technology = {other}: MQSim knows SLC, MLC, TLC"),
                ))
            }
        };
        for (key, stem) in [("read", "Page_Read_Latency"), ("program", "Page_Program_Latency")] {
            let mut vals = Vec::new();
            for lvl in ["LSB", "CSB", "MSB"] {
                let field = format!("{stem}_{lvl}");
                if levels.contains(&lvl) {
                    let (line, v) = r.positive(&field)?;
                    vals.push((field, line, v));
                } else if let Some((line, v)) = r.f.get(&field) {
                    d.note(
                        NoteKind::NoEffect,
                        Some(line),
                        format!("{field} = {v}"),
                        format!("Flash_Technology = {} has no {lvl} pages", tech.1),
                    );
                }
            }
            let first = vals[0].2;
            let mean = vals.iter().map(|v| v.2).sum::<u64>() / vals.len() as u64;
            let names: Vec<String> = vals.iter().map(|v| format!("{} = {} (line {})", v.0, v.2, v.1)).collect();
            if vals.iter().any(|v| v.2 != first) {
                d.note(
                    NoteKind::NotRepresented,
                    Some(vals[0].1),
                    names.join(", "),
                    format!(
                        "{} latencies differ by page type; dedupsim has one latency per operation and takes their \
                         mean, {mean} ns",
                        tech.1
                    ),
                );
            }
            d.set_str("timing", key, &format_time_ns(mean), format!("{} ns", names.join(", ")));
        }
        let (el, erase) = r.positive("Block_Erase_Latency")?;
        d.set_str("timing", "erase", &format_time_ns(erase), format!("Block_Erase_Latency = {erase} ns (line {el})"));
        let (rl, rate) = r.positive("Channel_Transfer_Rate")?;
        let (wl, width) = r.positive("Flash_Channel_Width")?;
        d.set_str(
            "timing",
            "transfer",
            &format!("{}MB/s", rate * width),
            format!("Channel_Transfer_Rate = {rate} MT/s (line {rl}) x Flash_Channel_Width = {width} B (line {wl})"),
        );
        let (sl, sched) = r.text("Transaction_Scheduling_Policy")?;
        d.set_str(
            "timing",
            "scheduling",
            "read-priority",
            format!("Transaction_Scheduling_Policy = {sched} (line {sl}): reads before writes before GC on a chip"),
        );
        if sched != "OUT_OF_ORDER" {
            d.note(
                NoteKind::NotRepresented,
                Some(sl),
                format!("Transaction_Scheduling_Policy = {sched}"),
                "dedupsim models MQSim's OUT_OF_ORDER (read priority) scheduler only",
            );
        }
        d.set_str("timing", "write_completion", "program", "model: MQSim completes a write when its program has ended");
        d.set("timing", "duplicate_read_shortcut", "false", "model: MQSim reads every page from the flash");

        // ---- capacity, GC, allocation
        let (ol, op) = r.fraction("Overprovisioning_Ratio")?;
        d.set("", "over_provisioning", format!("{op}"), format!("Overprovisioning_Ratio (line {ol})"));
        let (gl, thr) = r.fraction("GC_Exec_Threshold")?;
        let min_free = blocks_of(thr, blocks as u32, false).max(1);
        d.set(
            "gc",
            "min_free_blocks",
            min_free.to_string(),
            format!(
                "GC_Exec_Threshold = {thr} x Block_No_Per_Plane {blocks} (line {gl}), rounded down as MQSim does (at \
                 least 1)"
            ),
        );
        d.set_str(
            "gc",
            "rule",
            "one-per-write",
            "model: MQSim checks the threshold when a plane opens a new block and collects one greedy victim \
             (dedupsim's nearest rule checks after every page write)",
        );
        let (bl, policy) = r.text("GC_Block_Selection_Policy")?;
        if policy != "GREEDY" {
            d.note(
                NoteKind::NotRepresented,
                Some(bl),
                format!("GC_Block_Selection_Policy = {policy}"),
                "dedupsim's GC victim is greedy (most invalid pages)",
            );
        }
        let (cl, copyback) = r.boolean("Use_Copyback_for_GC")?;
        d.set("gc", "copyback", copyback.to_string(), format!("Use_Copyback_for_GC (line {cl})"));
        let (wl, wear) = r.boolean("Dynamic_Wearleveling_Enabled")?;
        d.set("gc", "wear_leveling", wear.to_string(), format!("Dynamic_Wearleveling_Enabled (line {wl})"));
        if let Some((line, on)) = r.opt_boolean("Static_Wearleveling_Enabled")? {
            let thr = r.f.get("Static_Wearleveling_Threshold");
            if on {
                d.note(
                    NoteKind::NotRepresented,
                    Some(line),
                    "Static_Wearleveling_Enabled = true",
                    "dedupsim has no static wear levelling (moving cold data)",
                );
            } else if let Some((tl, t)) = thr {
                d.note(
                    NoteKind::NoEffect,
                    Some(tl),
                    format!("Static_Wearleveling_Threshold = {t}"),
                    "static wear levelling is off",
                );
            }
        }
        if let Some((line, on)) = r.opt_boolean("Preemptible_GC_Enabled")? {
            let hard = r.f.get("GC_Hard_Threshold");
            if on {
                d.note(
                    NoteKind::NotRepresented,
                    Some(line),
                    "Preemptible_GC_Enabled = true",
                    "dedupsim's GC is not preemptible",
                );
            } else if let Some((hl, h)) = hard {
                d.note(NoteKind::NoEffect, Some(hl), format!("GC_Hard_Threshold = {h}"), "used only by preemptible GC");
            }
        }
        let (al, scheme) = r.text("Plane_Allocation_Scheme")?;
        let order: StaticOrder = scheme.parse().map_err(|_| {
            error(
                origin,
                Some(al),
                format!(
                    "Plane_Allocation_Scheme = {scheme}: MQSim's schemes are the 24 orders of C, W, D, P (e.g. CWDP)"
                ),
            )
        })?;
        d.set_str(
            "",
            "allocation",
            &format!("static:{order}"),
            format!("Plane_Allocation_Scheme = {scheme} (line {al}): static striping by LPN, {order} fastest first"),
        );

        // ---- what is on the device before the replay
        let (pl, pre) = r.boolean("Enabled_Preconditioning")?;
        if pre {
            d.set_str(
                "precondition",
                "rule",
                "reads-before-writes",
                format!("Enabled_Preconditioning = true (line {pl}): see the note above"),
            );
            d.note(
                NoteKind::NotRepresented,
                Some(pl),
                "Enabled_Preconditioning = true",
                "MQSim fills the device to a steady state drawn from the workload's statistics; dedupsim \
                 preconditions only the pages read before they are written",
            );
        } else {
            d.set_str(
                "precondition",
                "rule",
                "reads-before-writes",
                format!(
                    "Enabled_Preconditioning = false (line {pl}): MQSim gives a never-written page a place on its \
                     first read"
                ),
            );
        }
        d.set_str(
            "precondition",
            "placement",
            "round-robin",
            "(with static allocation, placed by LPN like every write, as MQSim does)",
        );
        d.set("precondition", "aged", "0.0", "model: MQSim starts from a fresh device");

        // ---- the rest: listed, never dropped silently
        let rest = |d: &mut Draft, f: &mut Fields, field: &str, ok: &dyn Fn(&str) -> bool, why: &str| {
            if let Some((line, v)) = f.get(field) {
                let kind = if ok(&v) { NoteKind::NoEffect } else { NoteKind::NotRepresented };
                let why = if kind == NoteKind::NoEffect { "as dedupsim does" } else { why };
                d.note(kind, Some(line), format!("{field} = {v}"), why);
            }
        };
        let host = "MQSim's host interface: dedupsim hands every request to the device when it arrives and \
                    charges no host transfer";
        rest(&mut d, &mut r.f, "PCIe_Lane_Bandwidth", &|_| false, host);
        rest(&mut d, &mut r.f, "PCIe_Lane_Count", &|_| false, host);
        let sata = r.f.get("HostInterface_Type");
        let is_sata = sata.as_ref().is_some_and(|(_, v)| v == "SATA");
        if let Some((line, v)) = sata {
            d.note(NoteKind::NotRepresented, Some(line), format!("HostInterface_Type = {v}"), host);
        }
        if let Some((line, v)) = r.f.get("SATA_Processing_Delay") {
            let (kind, why) =
                if is_sata { (NoteKind::NotRepresented, host) } else { (NoteKind::NoEffect, "used only with SATA") };
            d.note(kind, Some(line), format!("SATA_Processing_Delay = {v}"), why);
        }
        rest(&mut d, &mut r.f, "IO_Queue_Depth", &|_| false, host);
        rest(&mut d, &mut r.f, "Queue_Fetch_Size", &|_| false, host);
        rest(
            &mut d,
            &mut r.f,
            "Seed",
            &|_| false,
            "MQSim's random generator; dedupsim's `seed` (from the base) drives its own",
        );
        rest(&mut d, &mut r.f, "Memory_Type", &|v| v == "FLASH", "dedupsim simulates flash only");
        let cache = "dedupsim has no DRAM data cache (MQSim's workload file turns it on or off)";
        for field in [
            "Caching_Mechanism",
            "Data_Cache_Sharing_Mode",
            "Data_Cache_Capacity",
            "Data_Cache_DRAM_Row_Size",
            "Data_Cache_DRAM_Data_Rate",
            "Data_Cache_DRAM_Data_Busrt_Size",
            "Data_Cache_DRAM_tRCD",
            "Data_Cache_DRAM_tCL",
            "Data_Cache_DRAM_tRP",
        ] {
            rest(&mut d, &mut r.f, field, &|_| false, cache);
        }
        rest(&mut d, &mut r.f, "Address_Mapping", &|v| v == "PAGE_LEVEL", "dedupsim's FTL maps pages");
        let ideal = r.f.get("Ideal_Mapping_Table");
        let ideal_on = ideal.as_ref().is_some_and(|(_, v)| v == "true");
        if let Some((line, v)) = ideal {
            let kind = if ideal_on { NoteKind::NoEffect } else { NoteKind::NotRepresented };
            let why = if ideal_on {
                "as dedupsim does (the whole mapping table in DRAM)"
            } else {
                "dedupsim keeps the whole mapping table in DRAM: no mapping-table misses"
            };
            d.note(kind, Some(line), format!("Ideal_Mapping_Table = {v}"), why);
        }
        for field in ["CMT_Capacity", "CMT_Sharing_Mode"] {
            let why = if ideal_on { "used only without an ideal mapping table" } else { "no cached mapping table" };
            if let Some((line, v)) = r.f.get(field) {
                let kind = if ideal_on { NoteKind::NoEffect } else { NoteKind::NotRepresented };
                d.note(kind, Some(line), format!("{field} = {v}"), why);
            }
        }
        rest(
            &mut d,
            &mut r.f,
            "Block_PE_Cycles_Limit",
            &|_| false,
            "dedupsim counts erases per block but retires none",
        );
        rest(&mut d, &mut r.f, "Page_Metadat_Capacity", &|_| false, "dedupsim keeps no per-page metadata area");
        rest(&mut d, &mut r.f, "Flash_Comm_Protocol", &|_| false, "dedupsim charges no command or address cycles");
        let suspend = r.f.get("CMD_Suspension_Support");
        let suspend_on = suspend.as_ref().is_some_and(|(_, v)| v != "NONE");
        if let Some((line, v)) = suspend {
            let kind = if suspend_on { NoteKind::NotRepresented } else { NoteKind::NoEffect };
            let why = if suspend_on { "dedupsim never suspends a program or an erase" } else { "as dedupsim does" };
            d.note(kind, Some(line), format!("CMD_Suspension_Support = {v}"), why);
        }
        for field in [
            "Suspend_Erase_Time",
            "Suspend_Program_Time",
            "Preferred_suspend_erase_time_for_read",
            "Preferred_suspend_erase_time_for_write",
            "Preferred_suspend_write_time_for_read",
        ] {
            if let Some((line, v)) = r.f.get(field) {
                let (kind, why) = if suspend_on {
                    (NoteKind::NotRepresented, "dedupsim never suspends a program or an erase")
                } else {
                    (NoteKind::NoEffect, "used only with CMD_Suspension_Support")
                };
                d.note(kind, Some(line), format!("{field} = {v}"), why);
            }
        }
        for field in OUTPUT_ONLY {
            if let Some((line, v)) = r.f.get(field) {
                d.note(NoteKind::NoEffect, Some(line), format!("{field} = {v}"), "MQSim's output only");
            }
        }
        for (name, line, v) in r.f.unused() {
            d.note(NoteKind::NoEffect, Some(line), format!("{name} = {v}"), "not an MQSim device field: not imported");
        }
        Ok(d)
    }
}

/// Typed access to the fields, with errors naming file and line.
struct Reader<'a> {
    f: Fields,
    origin: &'a str,
}

impl Reader<'_> {
    fn text(&mut self, field: &str) -> Result<(usize, String), ConfigError> {
        self.f.get(field).ok_or_else(|| error(self.origin, None, format!("no <{field}> element")))
    }

    fn positive(&mut self, field: &str) -> Result<(usize, u64), ConfigError> {
        let (line, v) = self.text(field)?;
        match v.parse::<u64>() {
            Ok(n) if n > 0 && n <= u64::from(u32::MAX) => Ok((line, n)),
            _ => Err(error(self.origin, Some(line), format!("<{field}>{v}</{field}>: expected a positive integer"))),
        }
    }

    fn fraction(&mut self, field: &str) -> Result<(usize, f64), ConfigError> {
        let (line, v) = self.text(field)?;
        match v.parse::<f64>() {
            Ok(x) if (0.0..1.0).contains(&x) => Ok((line, x)),
            _ => Err(error(self.origin, Some(line), format!("<{field}>{v}</{field}>: expected a fraction in [0, 1)"))),
        }
    }

    fn boolean(&mut self, field: &str) -> Result<(usize, bool), ConfigError> {
        let (line, v) = self.text(field)?;
        parse_bool(self.origin, line, field, &v).map(|b| (line, b))
    }

    fn opt_boolean(&mut self, field: &str) -> Result<Option<(usize, bool)>, ConfigError> {
        match self.f.get(field) {
            Some((line, v)) => parse_bool(self.origin, line, field, &v).map(|b| Some((line, b))),
            None => Ok(None),
        }
    }
}

fn parse_bool(origin: &str, line: usize, field: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(error(origin, Some(line), format!("<{field}>{v}</{field}>: expected true or false"))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::import;

    fn mini(extra: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?>\n<Execution_Parameter_Set>\n<Device_Parameter_Set>\n\
             <Enabled_Preconditioning>false</Enabled_Preconditioning>\n\
             <Plane_Allocation_Scheme>PDCW</Plane_Allocation_Scheme>\n\
             <Transaction_Scheduling_Policy>OUT_OF_ORDER</Transaction_Scheduling_Policy>\n\
             <Overprovisioning_Ratio>0.125</Overprovisioning_Ratio>\n<GC_Exec_Threshold>0.05</GC_Exec_Threshold>\n\
             <GC_Block_Selection_Policy>GREEDY</GC_Block_Selection_Policy>\n\
             <Use_Copyback_for_GC>false</Use_Copyback_for_GC>\n\
             <Dynamic_Wearleveling_Enabled>true</Dynamic_Wearleveling_Enabled>\n\
             <Flash_Channel_Count>4</Flash_Channel_Count>\n<Flash_Channel_Width>1</Flash_Channel_Width>\n\
             <Channel_Transfer_Rate>333</Channel_Transfer_Rate>\n<Chip_No_Per_Channel>2</Chip_No_Per_Channel>\n\
             {extra}<Flash_Parameter_Set>\n<Flash_Technology>MLC</Flash_Technology>\n\
             <Page_Read_Latency_LSB>50000</Page_Read_Latency_LSB>\n<Page_Read_Latency_CSB>0</Page_Read_Latency_CSB>\n\
             <Page_Read_Latency_MSB>70000</Page_Read_Latency_MSB>\n\
             <Page_Program_Latency_LSB>500000</Page_Program_Latency_LSB>\n\
             <Page_Program_Latency_CSB>1</Page_Program_Latency_CSB>\n\
             <Page_Program_Latency_MSB>500000</Page_Program_Latency_MSB>\n\
             <Block_Erase_Latency>3000000</Block_Erase_Latency>\n<Die_No_Per_Chip>2</Die_No_Per_Chip>\n\
             <Plane_No_Per_Die>2</Plane_No_Per_Die>\n<Block_No_Per_Plane>100</Block_No_Per_Plane>\n\
             <Page_No_Per_Block>64</Page_No_Per_Block>\n<Page_Capacity>8192</Page_Capacity>\n\
             </Flash_Parameter_Set>\n</Device_Parameter_Set>\n</Execution_Parameter_Set>\n"
        )
    }

    #[test]
    fn maps_geometry_timing_and_scheme() {
        let i = import(&mini(""), "ssd.xml", None).unwrap();
        assert_eq!(i.format, "mqsim");
        let c = &i.config;
        assert_eq!(c.allocation.to_string(), "static:PDCW");
        assert_eq!(c.gc.min_free_blocks, 5); // floor(0.05 x 100)
        assert_eq!(c.geometry.page_size, 8192);
        assert_eq!(c.timing.read.0, 60_000); // mean of LSB and MSB: MLC has no CSB pages
        assert_eq!(c.timing.transfer_ps_per_byte, 3003); // 333 MB/s, as "333MB/s" parses
        assert!(i.notes.iter().any(|n| n.field.starts_with("Page_Read_Latency_LSB = 50000")), "{:?}", i.notes);
    }

    #[test]
    fn errors_name_the_line_and_unknown_fields_are_listed() {
        let e = import(&mini("").replace("PDCW", "CWD"), "ssd.xml", None).unwrap_err().to_string();
        assert!(e.starts_with("ssd.xml:5: Plane_Allocation_Scheme = CWD"), "{e}");
        let e = import(&mini("").replace(">0.05<", ">lots<"), "ssd.xml", None).unwrap_err().to_string();
        assert_eq!(e, "ssd.xml:8: <GC_Exec_Threshold>lots</GC_Exec_Threshold>: expected a fraction in [0, 1)");
        let e = import(&mini("").replace("</Device_Parameter_Set>", ""), "ssd.xml", None).unwrap_err().to_string();
        assert!(e.starts_with("ssd.xml:") && e.contains("not well-formed XML"), "{e}");
        let i = import(&mini("<Warp_Drive>on</Warp_Drive>\n"), "ssd.xml", None).unwrap();
        assert!(i.toml.contains("#   line 16: Warp_Drive = on: not an MQSim device field"), "{}", i.toml);
    }
}
