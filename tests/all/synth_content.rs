//! Synthetic workload generator and content models: determinism, realized
//! statistics, and the FAD §IV-A Zipf facts.

use dedupsim::content::{assign_content, realized_dedup_rate, try_assign_content, ContentError, ContentModel, ZipfN};
use dedupsim::synth::{generate, Interarrival, SizeDist, SynthError, SynthSpec};
use dedupsim::units::{ContentId, Nanos, Op};
use dedupsim::workload::{Provenance, Request, Workload, NO_CONTENT};
use std::collections::HashSet;

fn small(requests: u64) -> SynthSpec {
    SynthSpec { requests, ..SynthSpec::default_small() }
}

#[test]
fn generation_is_deterministic_per_seed() {
    let spec = small(50_000);
    let a = generate(&spec, 7).unwrap();
    let b = generate(&spec, 7).unwrap();
    let c = generate(&spec, 8).unwrap();
    assert_eq!(a.requests, b.requests);
    assert_ne!(a.requests, c.requests);
    assert_eq!(a.provenance.name, "default-small");
    assert_eq!(a.provenance.source, "synthetic (seed 7)");
    // A pinned seed overrides the run seed.
    let pinned = SynthSpec { seed: Some(7), ..spec.clone() };
    assert_eq!(generate(&pinned, 1234).unwrap().requests, a.requests);
}

#[test]
fn benchmark_statistics() {
    let spec = SynthSpec::benchmark();
    let w = generate(&spec, 42).unwrap();
    let rs = &w.requests;
    assert_eq!(rs.len(), 1_000_000);
    let n = rs.len() as f64;

    let reads = rs.iter().filter(|r| r.op == Op::Read).count() as f64;
    assert!((reads / n - 0.5).abs() < 0.01, "read ratio {}", reads / n);
    assert!(rs.iter().all(|r| r.op != Op::Trim && r.content == NO_CONTENT));

    let h16: f64 = (1..=16).map(|i| 1.0 / i as f64).sum();
    let expect = 16.0 / h16;
    let mean = rs.iter().map(|r| r.pages as f64).sum::<f64>() / n;
    assert!((mean / expect - 1.0).abs() < 0.02, "mean size {mean} vs {expect}");
    assert!(rs.iter().all(|r| (1..=16).contains(&r.pages)));

    // Sequential continuations: start exactly at the previous request's end
    // (random placements land there only by coincidence, ~1e-6).
    let seq = rs.windows(2).filter(|p| p[1].lpn as u64 == p[0].lpn as u64 + p[0].pages as u64).count() as f64;
    assert!((seq / (n - 1.0) - 0.3).abs() < 0.01, "sequential {}", seq / n);

    // Footprint bounds: 50 GiB of 4 KiB pages.
    let fp = 50u64 << 18;
    assert!(rs.iter().all(|r| r.lpn as u64 + r.pages as u64 <= fp));
    assert!(w.lpn_span <= fp && w.lpn_span > fp - 1000);

    // Hot region (5 GiB): 40% land there by choice, plus 10% of the 30%
    // uniform requests, plus sequential ones following hot requests.
    let hot = 5u64 << 18;
    let in_hot = rs.iter().filter(|r| r.lpn as u64 + r.pages as u64 <= hot).count() as f64 / n;
    assert!(in_hot > 0.43 && in_hot < 0.65, "in hot region {in_hot}");

    // Arrivals: non-decreasing, starting at 0, mean gap 100 us.
    assert_eq!(rs[0].arrival, Nanos::ZERO);
    assert!(rs.windows(2).all(|p| p[0].arrival <= p[1].arrival));
    let mean_gap_us = rs.last().unwrap().arrival.as_us_f64() / (n - 1.0);
    assert!((mean_gap_us - 100.0).abs() < 1.0, "mean gap {mean_gap_us}");
}

#[test]
fn requests_stay_inside_tiny_footprints() {
    // Footprint barely larger than the largest request, everything sequential
    // or hot: continuations must wrap instead of crossing the end.
    let spec: SynthSpec = "requests=20000,size=uni:1-8,seq=0.6,hot=0.4:40KiB,footprint=40KiB".parse().unwrap();
    let w = generate(&spec, 1).unwrap();
    assert!(w.requests.iter().all(|r| r.pages >= 1 && r.lpn + r.pages <= 10));
    let spec: SynthSpec = "requests=1000,size=3,seq=1,hot=0,footprint=12KiB,iat=fixed:5us".parse().unwrap();
    let w = generate(&spec, 1).unwrap();
    assert!(w.requests.iter().all(|r| r.lpn == 0 && r.pages == 3));
    assert_eq!(w.requests[10].arrival, Nanos::from_us(50));
}

#[test]
fn parsed_spec_matches_literal() {
    let s: SynthSpec =
        "requests=1000,read=0.5,size=inv:16,seq=0.3,hot=0.4:5GiB,footprint=50GiB,iat=exp:100us".parse().unwrap();
    assert_eq!(s, SynthSpec { name: "synthetic".into(), requests: 1000, ..SynthSpec::benchmark() });
    let b: SynthSpec = "benchmark".parse().unwrap();
    assert_eq!(b, SynthSpec::benchmark());
    let b: SynthSpec = "benchmark,requests=1k,iat=uni:10us-1ms".parse().unwrap();
    assert_eq!(b.requests, 1000);
    assert_eq!(b.interarrival, Interarrival::Uniform { min_us: 10.0, max_us: 1000.0 });
    let l: SynthSpec = "size=list:1:3/8:1,footprint=1GiB,hot=0.2:64MiB".parse().unwrap();
    assert_eq!(l.size, SizeDist::Explicit(vec![(1, 3.0), (8, 1.0)]));
}

#[test]
fn bad_spec_strings_give_clear_errors() {
    for (s, needle) in [
        ("", "empty"),
        ("requests=ten", "requests=ten"),
        ("requests=0", "`requests`"),
        ("read=1.5", "not a fraction"),
        ("seq=0.7,hot=0.5", "must not exceed 1"),
        ("size=0", "`size`"),
        ("size=uni:8-2", "exceeds maximum"),
        ("size=zipf:4", "unknown size distribution"),
        ("size=inv:16,footprint=32KiB", "`footprint_bytes`"),
        ("footprint=1GiB", "`hot_bytes`"),
        ("hot=0.4:16KiB", "`hot_bytes`"),
        ("footprint=50 parsecs", "unknown byte unit"),
        ("iat=exp:100 fortnights", "unknown time unit"),
        ("iat=gauss:3us", "unknown inter-arrival"),
        ("reads=0.5", "unknown key `reads`"),
        ("read=0.5,read=0.6", "more than once"),
        ("read", "expected key=value"),
        ("read=0.5,,seq=0.1", "empty item"),
        ("page=1000", "`page_size`"),
        ("footprint=100TiB", "`footprint_bytes`"),
        ("seed=-1", "seed"),
    ] {
        let e: SynthError = s.parse::<SynthSpec>().unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(needle), "`{s}` gave `{msg}`, expected `{needle}`");
    }
}

#[test]
fn generate_rejects_invalid_specs_without_panicking() {
    let bad = SynthSpec { read_ratio: f64::NAN, ..SynthSpec::benchmark() };
    assert!(generate(&bad, 1).is_err());
    let bad = SynthSpec { interarrival: Interarrival::Exponential { mean_us: -1.0 }, ..SynthSpec::benchmark() };
    assert!(generate(&bad, 1).is_err());
    let bad = SynthSpec { size: SizeDist::Explicit(vec![(4, 0.0)]), ..SynthSpec::benchmark() };
    assert!(generate(&bad, 1).is_err());
}

/// `count` back-to-back writes of `pages` pages each, without content.
fn writes(count: u32, pages: u32) -> Workload {
    let reqs = (0..count)
        .map(|i| Request {
            arrival: Nanos(i as u64),
            op: Op::Write,
            lpn: i * pages,
            pages,
            content: NO_CONTENT,
            stream: 0,
        })
        .collect();
    Workload::from_requests(Provenance::default(), reqs)
}

#[test]
fn fad_literal_zipf_gives_57_percent_not_50() {
    // FAD §IV-A: a = 0.2, N = 50% of the written pages. With 1,000,000
    // i.i.d. draws the realized dedup rate is ~57.4%, not 50%.
    let mut w = writes(1_000_000, 1);
    let model: ContentModel = "zipf:a=0.2,n=0.5".parse().unwrap();
    let s = assign_content(&mut w, &model, 42);
    assert_eq!(s.error, None);
    assert_eq!(s.pages_drawn, 1_000_000);
    assert_eq!(s.n_used, 500_000);
    assert_eq!(w.content_space, 500_000);
    assert!((s.realized_dedup_rate - 0.57).abs() < 0.01, "realized {}", s.realized_dedup_rate);
    assert!((realized_dedup_rate(&w) - s.realized_dedup_rate).abs() < 1e-12);
    assert!(w.has_content());
    assert!(w.contents.iter().all(|c| c.0 < 500_000));
}

#[test]
fn calibrated_zipf_hits_target_dedup() {
    let mut w = writes(1_000_000, 1);
    let model: ContentModel = "zipf:a=0.2,dedup=0.5".parse().unwrap();
    let s = assign_content(&mut w, &model, 42);
    assert!((s.realized_dedup_rate - 0.5).abs() < 0.01, "realized {} with N = {}", s.realized_dedup_rate, s.n_used);
    assert!(s.n_used > 500_000, "N = {}", s.n_used);
    // Calibration also holds with copies mixed in, on a generated workload.
    let mut w = generate(&small(200_000), 3).unwrap();
    let s = assign_content(&mut w, &"zipf:a=0.2,dedup=0.5,copy=0.2".parse().unwrap(), 3);
    assert!(s.copied_pages > 0);
    assert!((s.realized_dedup_rate - 0.5).abs() < 0.01, "realized {} with copies", s.realized_dedup_rate);
}

#[test]
fn content_is_deterministic_per_seed() {
    let base = generate(&small(20_000), 5).unwrap();
    let model: ContentModel = "zipf:a=0.2,n=0.5,copy=0.1".parse().unwrap();
    let run = |seed| {
        let mut w = base.clone();
        let s = assign_content(&mut w, &model, seed);
        (w, s)
    };
    let (a, sa) = run(9);
    let (b, sb) = run(9);
    let (c, _) = run(10);
    assert_eq!(a.contents, b.contents);
    assert_eq!(a.requests, b.requests);
    assert_eq!(sa, sb);
    assert_ne!(a.contents, c.contents);
    // Every write got content, reads did not; the request order is kept.
    for (r, r0) in a.requests.iter().zip(&base.requests) {
        assert_eq!((r.op, r.lpn, r.pages, r.arrival), (r0.op, r0.lpn, r0.pages, r0.arrival));
        assert_eq!(r.op == Op::Write, r.content != NO_CONTENT);
    }
    // Contents are laid out in request order.
    let starts: Vec<u32> = a.requests.iter().filter(|r| r.op == Op::Write).map(|r| r.content).collect();
    assert!(starts.windows(2).all(|p| p[0] < p[1]));
}

#[test]
fn copies_produce_repeated_runs() {
    // Fixed 4-page writes over a huge id space (N = 100 × pages) so that
    // repeated pairs of consecutive ids come only from copies.
    let run = |copy: f64| {
        let mut w = writes(20_000, 4);
        let model = ContentModel::Zipf { a: 0.2, n: ZipfN::Fraction(100.0), copy };
        let s = assign_content(&mut w, &model, 11);
        assert_eq!(s.error, None);
        let mut seen: HashSet<(ContentId, ContentId, ContentId, ContentId)> = HashSet::new();
        let mut repeats = 0;
        for r in &w.requests {
            let c = w.content_of(r);
            if !seen.insert((c[0], c[1], c[2], c[3])) {
                repeats += 1;
            }
        }
        (repeats as f64 / w.requests.len() as f64, s)
    };
    let (none, s0) = run(0.0);
    assert_eq!(none, 0.0);
    assert_eq!(s0.copied_pages, 0);
    let (some, s3) = run(0.3);
    assert!((some - 0.3).abs() < 0.02, "repeated runs {some}");
    assert!(s3.realized_dedup_rate > s0.realized_dedup_rate + 0.25);
    assert_eq!(s3.copied_pages as f64, some * 20_000.0 * 4.0);
}

#[test]
fn copies_of_shorter_extents_are_extended_with_fresh_draws() {
    let mut reqs: Vec<Request> = Vec::new();
    for i in 0..2000u32 {
        reqs.push(Request {
            arrival: Nanos(i as u64),
            op: Op::Write,
            lpn: 0,
            pages: if i % 2 == 0 { 2 } else { 6 },
            content: NO_CONTENT,
            stream: 0,
        });
    }
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    let s = assign_content(&mut w, &"zipf:a=0,n=1000,copy=1".parse().unwrap(), 1);
    // Every request after the first copies one; copies are min(L, len(S)).
    assert!(s.copied_pages > 2 * 1999);
    assert!(s.copied_pages < 6 * 1999);
    assert_eq!(s.pages_drawn, 1000 * 2 + 1000 * 6);
    // Each request's prefix repeats an earlier request's prefix.
    let prefixes: Vec<(ContentId, ContentId)> =
        w.requests.iter().map(|r| (w.content_of(r)[0], w.content_of(r)[1])).collect();
    for k in 1..prefixes.len() {
        assert!(prefixes[..k].contains(&prefixes[k]), "request {k}");
    }
}

#[test]
fn existing_content_is_kept_and_new_ids_do_not_collide() {
    // Two writes with "real" content (ids 0..3), one without, one read.
    let reqs = vec![
        Request { arrival: Nanos(0), op: Op::Write, lpn: 0, pages: 2, content: 0, stream: 0 },
        Request { arrival: Nanos(1), op: Op::Write, lpn: 8, pages: 3, content: NO_CONTENT, stream: 0 },
        Request { arrival: Nanos(2), op: Op::Read, lpn: 0, pages: 2, content: NO_CONTENT, stream: 0 },
        Request { arrival: Nanos(3), op: Op::Write, lpn: 4, pages: 2, content: 2, stream: 0 },
    ];
    let mut w = Workload::from_requests(Provenance::default(), reqs);
    w.contents = vec![ContentId(0), ContentId(1), ContentId(2), ContentId(0)];
    w.content_space = 3;
    let s = assign_content(&mut w, &ContentModel::Unique, 1);
    assert_eq!(s.pages_drawn, 3);
    assert_eq!(s.distinct, 3);
    assert_eq!(s.realized_dedup_rate, 0.0);
    assert_eq!(w.content_space, 6);
    assert_eq!(w.requests[0].content, 0);
    assert_eq!(w.requests[3].content, 2);
    assert_eq!(w.requests[2].content, NO_CONTENT);
    assert_eq!(w.requests[1].content, 4);
    assert_eq!(w.content_of(&w.requests[1]), &[ContentId(3), ContentId(4), ContentId(5)]);
    assert_eq!(&w.contents[..4], &[ContentId(0), ContentId(1), ContentId(2), ContentId(0)]);
    // Over all written pages: 7 pages, 6 distinct ids.
    assert!((realized_dedup_rate(&w) - (1.0 - 6.0 / 7.0)).abs() < 1e-12);

    // A second pass has nothing left to do.
    let again = assign_content(&mut w, &ContentModel::fad(), 1);
    assert_eq!(again.pages_drawn, 0);
    assert_eq!(w.content_space, 6);
}

#[test]
fn unique_model_has_no_duplicates() {
    let mut w = generate(&small(30_000), 2).unwrap();
    let s = assign_content(&mut w, &ContentModel::Unique, 2);
    assert!(s.pages_drawn > 0);
    assert_eq!(s.distinct, s.pages_drawn);
    assert_eq!(s.n_used, s.pages_drawn);
    assert_eq!(realized_dedup_rate(&w), 0.0);
}

#[test]
fn invalid_hand_built_model_reports_error_and_leaves_workload() {
    let mut w = writes(100, 2);
    let before = w.clone();
    let bad = ContentModel::Zipf { a: f64::NAN, n: ZipfN::Fraction(0.5), copy: 0.0 };
    let s = assign_content(&mut w, &bad, 1);
    assert!(s.error.as_deref().unwrap_or("").contains("`a`"), "{:?}", s.error);
    assert_eq!(w.requests, before.requests);
    assert!(w.contents.is_empty());
    assert!(try_assign_content(&mut w, &bad, 1).is_err());
    // Id space exhaustion is reported, not a panic.
    w.content_space = u32::MAX;
    assert!(try_assign_content(&mut w, &ContentModel::Unique, 1).is_err());
    assert!(try_assign_content(&mut w, &ContentModel::fad(), 1).is_err());
}

/// A `dedup` target below every rate the exponent realizes on the pages
/// (N clamped to the id space) is an error giving the reachable range and
/// the largest exponent that does reach it, instead of a silently wrong
/// rate (a=2 realized ~96% for dedup=0.5); the workload is unchanged.
#[test]
fn unreachable_dedup_targets_are_errors_with_the_reachable_range() {
    let mut w = writes(2000, 1);
    let before = w.clone();
    for a in [2.0, 5.0, 50.0] {
        let model = ContentModel::Zipf { a, n: ZipfN::TargetDedup(0.5), copy: 0.0 };
        let Err(ContentError::Unreachable(u)) = try_assign_content(&mut w, &model, 1) else {
            panic!("a={a}: dedup=0.5 should be unreachable")
        };
        assert_eq!((w.requests.clone(), w.contents.len()), (before.requests.clone(), 0));
        assert_eq!((u.pages, u.max_n, u.target), (2000, u32::MAX as u64, 0.5));
        assert!(u.lowest > 0.9 && u.lowest <= u.highest, "{u:?}");
        assert_eq!(u.highest, 1.0 - 1.0 / 2000.0);
        let msg = ContentError::Unreachable(u.clone()).to_string();
        for needle in ["cannot realize a 50.00% dedup rate on these 2000 written pages", "reachable rates are"] {
            assert!(msg.contains(needle), "{needle:?} missing from {msg}");
        }
        // The exponent it suggests (rounded down, as printed) reaches the target.
        let max_a = u.max_a.expect("a smaller exponent reaches 50%");
        assert!(msg.contains(&format!("a <= {}", (max_a * 100.0).floor() / 100.0)), "{msg}");
        let ok = ContentModel::Zipf { a: (max_a * 100.0).floor() / 100.0, n: ZipfN::TargetDedup(0.5), copy: 0.0 };
        let s = try_assign_content(&mut w.clone(), &ok, 1).unwrap();
        assert!((s.realized_dedup_rate - 0.5).abs() < 0.05, "{s:?}");
    }
    // Copies alone above the target: no exponent helps; lower `copy`.
    let model: ContentModel = "zipf:a=0.2,dedup=0.1,copy=0.9".parse().unwrap();
    let Err(ContentError::Unreachable(u)) = try_assign_content(&mut w, &model, 1) else { panic!("copies") };
    assert!(u.max_a.is_none() && u.copied > 0.8, "{u:?}");
    assert!(ContentError::Unreachable(u).to_string().contains("lower `copy`"));
    // Reachable targets, the top end (within one page of N = 1: 1 page
    // cannot repeat) and dedup=0 (within 0.1 point) are not errors.
    for (pages, model) in [
        (2000, "zipf:a=0.2,dedup=0.5"),
        (2000, "zipf:a=1,dedup=0.5"),
        (2000, "zipf:a=2,dedup=0.97"),
        (1, "zipf:a=0.2,dedup=0.5"),
        (3, "zipf:a=0.2,dedup=0.9"),
        (100_000, "zipf:a=0.2,dedup=0"),
    ] {
        try_assign_content(&mut writes(pages, 1), &model.parse().unwrap(), 1)
            .unwrap_or_else(|e| panic!("{pages} pages, {model}: {e}"));
    }
}

#[test]
fn sparse_populations_keep_the_id_space_dense() {
    // dedup=0 asks for an unbounded N; n=100 for N = 100 × pages. Either
    // way only the ranks actually drawn get ids, densely.
    for model in ["zipf:a=0.2,dedup=0", "zipf:a=0.2,n=100"] {
        let mut w = writes(10_000, 2);
        w.content_space = 5;
        let s = assign_content(&mut w, &model.parse().unwrap(), 4);
        assert_eq!(s.error, None);
        assert!(s.n_used > 20_000, "{model}: N = {}", s.n_used);
        assert_eq!(s.ids_added, s.distinct);
        assert_eq!(w.content_space as u64, 5 + s.distinct);
        assert!(s.realized_dedup_rate < 0.01, "{model}: {}", s.realized_dedup_rate);
        let ids: HashSet<u32> = w.contents.iter().map(|c| c.0).collect();
        assert_eq!(ids.len() as u64, s.distinct);
        assert!(ids.iter().all(|&i| (5..w.content_space).contains(&i)));
    }
    // Dense populations add exactly N ids.
    let mut w = writes(10_000, 2);
    let s = assign_content(&mut w, &ContentModel::fad(), 4);
    assert_eq!((s.n_used, s.ids_added), (10_000, 10_000));
    assert_eq!(w.content_space, 10_000);
}

mod arbitrary_specs {
    use super::*;
    use proptest::prelude::*;

    fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
        prop::sample::select(items.to_vec()).prop_map(str::to_string)
    }

    /// One `key=value` item of a synthetic spec: usually a value the key
    /// accepts (edges included), sometimes one it must reject.
    fn item() -> impl Strategy<Value = String> {
        let valid = prop_oneof![
            pick(&["1", "7", "200", "2000"]).prop_map(|v| format!("requests={v}")),
            pick(&["0", "0.5", "1", "1.0"]).prop_map(|v| format!("read={v}")),
            pick(&["0", "0.3", "1"]).prop_map(|v| format!("seq={v}")),
            pick(&["1", "inv:1", "inv:16", "uni:1-4", "uni:4-4", "list:1:1/4:2", "fixed:3", "64"])
                .prop_map(|v| format!("size={v}")),
            pick(&["0:0", "0.4:8MiB", "1:4KiB", "0.4:512MiB"]).prop_map(|v| format!("hot={v}")),
            pick(&["1GiB", "2GiB", "64GiB", "8MiB"]).prop_map(|v| format!("footprint={v}")),
            pick(&["4096", "8192", "512"]).prop_map(|v| format!("page={v}")),
            pick(&["exp:100us", "exp:1ns", "fixed:1ms", "fixed:0", "uni:1us-5us", "uni:0-0"])
                .prop_map(|v| format!("iat={v}")),
            pick(&["0", "18446744073709551615"]).prop_map(|v| format!("seed={v}")),
        ];
        let invalid = pick(&[
            "requests=0",
            "requests=-1",
            "requests=3e3",
            "read=1.5",
            "seq=nan",
            "size=inv:0",
            "size=uni:4-1",
            "size=list:",
            "hot=0.4:0",
            "hot=2:1GiB",
            "footprint=0B",
            "page=1000",
            "iat=exp:0",
            "iat=uni:5us-1us",
            "bogus=1",
            "x",
            "",
        ]);
        prop_oneof![15 => valid, 1 => invalid]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Any spec either fails to parse or validate with an error, or
        /// generates (capped at 2,000 requests) a workload whose requests
        /// are non-empty, in time order and inside the footprint; content
        /// models parse or fail, and assignment never panics.
        #[test]
        fn arbitrary_specs_parse_generate_or_fail_cleanly(
            items in prop::collection::vec(item(), 0..8),
            content in pick(&["unique", "zipf:a=0.2,dedup=0.5", "zipf:a=0.2,n=0.5", "zipf:a=0,dedup=0.9",
                "zipf:a=3,n=1", "zipf:a=0.2,dedup=0.5,copy=0.5", "zipf:a=-1,n=0.5", "zipf:dedup=1", "zipf", "bogus"]),
        ) {
            let text = items.join(",");
            let Ok(mut spec) = text.parse::<SynthSpec>() else { return Ok(()) };
            spec.requests = spec.requests.min(2_000);
            let Ok(mut w) = generate(&spec, 3) else { return Ok(()) };
            prop_assert!(!w.requests.is_empty());
            prop_assert!(w.requests.windows(2).all(|p| p[0].arrival <= p[1].arrival));
            prop_assert!(w.requests.iter().all(|r| r.pages > 0 && u64::from(r.lpn) + u64::from(r.pages) <= w.lpn_span));
            if let Ok(model) = content.parse::<ContentModel>() {
                let s = assign_content(&mut w, &model, 5);
                prop_assert!((0.0..=1.0).contains(&s.realized_dedup_rate));
            }
        }
    }
}
