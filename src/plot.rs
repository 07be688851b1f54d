//! Figures for reports: grouped bars (the FAD paper's per-workload figures),
//! latency CDFs and line plots (e.g. speedup versus ρ).
//!
//! Every function writes two files next to each other, `<stem>.svg` and
//! `<stem>.png` (the extension is appended to `stem`, so `out/fig.12`
//! gives `out/fig.12.svg`), and draws the same picture in both: a title, a
//! legend strip above the plot (one entry per series, wrapped onto several
//! rows when needed), axes with labels and a light horizontal grid.
//!
//! * Output is deterministic: the same inputs give byte-identical SVG (and
//!   PNG) files. Tick positions are computed here, not by heuristics that
//!   could depend on anything but the data.
//! * Text is drawn with DejaVu Sans, embedded in the binary (the `dejavu`
//!   crate) and registered once with plotters under the family name
//!   `sans-serif`, so PNGs render the same on machines without any system
//!   font; SVGs name the `sans-serif` family and let the viewer pick its own.
//!   That registration (plotters' process-wide font table) is the module's
//!   only global state.
//! * Bad input is an error naming the figure ([`PlotError`]), never a panic:
//!   no categories or series, a series of the wrong length or without
//!   points, NaN or infinite values, negative bar heights, a CDF without
//!   any positive latency (its axis is logarithmic).
//!
//! ```no_run
//! use dedupsim::plot;
//! let cats = vec!["hm_0".to_string(), "mail".to_string(), "Avg.".to_string()];
//! let series = vec![
//!     ("Dedup".to_string(), vec![1.0, 1.0, 1.0]),
//!     ("FAD".to_string(), vec![0.82, 0.67, 0.745]),
//! ];
//! plot::grouped_bars_normalized("out/fig12".as_ref(), "Normalized write latency",
//!     "Normalized latency", &cats, &series)?;
//! # Ok::<(), plot::PlotError>(())
//! ```

use crate::metrics::LatencyHistogram;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// Pixel size of [`grouped_bars`] figures.
pub const BARS_SIZE: (u32, u32) = (1200, 500);
/// Pixel size of [`cdf`] and [`lines`] figures.
pub const CHART_SIZE: (u32, u32) = (900, 550);

/// Font family every text is drawn with (DejaVu Sans in PNGs).
const FONT: &str = "sans-serif";
const TITLE_PX: u32 = 24;
const LABEL_PX: u32 = 16;
const DESC_PX: u32 = 18;
const LEGEND_PX: u32 = 17;

/// Series colours, in order (Tableau 10); series beyond ten reuse them.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];
const GRID: RGBColor = RGBColor(225, 225, 225);
const LIGHT_GRID: RGBColor = RGBColor(242, 242, 242);
/// The y = 0 line of line plots whose data change sign.
const ZERO_LINE: RGBColor = RGBColor(130, 130, 130);

/// Why a figure could not be produced. `path` is the figure's stem for bad
/// input, or the file being written when drawing or writing failed.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// Nothing to draw: no categories, no series, or a series without points.
    #[error("{}: nothing to plot: {reason}", path.display())]
    NoData { path: PathBuf, reason: String },
    /// Input that cannot be drawn (NaN, wrong length, negative bar, ...).
    #[error("{}: cannot plot: {reason}", path.display())]
    BadData { path: PathBuf, reason: String },
    /// The plotting backend failed (e.g. the PNG could not be encoded or
    /// written).
    #[error("{}: drawing failed: {reason}", path.display())]
    Draw { path: PathBuf, reason: String },
    /// Writing an SVG or PNG file (or renaming it into place) failed.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl From<crate::output::OutputError> for PlotError {
    fn from(e: crate::output::OutputError) -> Self {
        PlotError::Io { path: e.path, source: e.source }
    }
}

/// Grouped bar chart in the style of FAD's figures: one group per category
/// (workload; include an `"Avg."` category yourself if you want one), one
/// coloured bar per series inside each group, in series order. Every series
/// has one value per category; values must be finite and non-negative. The
/// y axis starts at 0 and ends just above the tallest bar's label.
///
/// Every bar carries its value (see `value_label`: three decimals below
/// 10, e.g. "0.931"), beyond the bar's free end. The labels lie flat when
/// the widest fits its bar, otherwise they stand upright (reading upwards),
/// at the largest size from 14 px down to 9 px whose text height fits the
/// bar; bars narrower than that carry none. A label never reaches into a
/// neighbouring bar's column, so labels cannot overlap. A final category
/// named `"Avg."` is set apart by a thin vertical rule. 1200x500 pixels.
pub fn grouped_bars(
    stem: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<(), PlotError> {
    bars(stem, title, y_label, categories, series, None)
}

/// [`grouped_bars`] for values normalized to a baseline, drawn as the change
/// from it: every bar starts at 1.0 and goes up (above 1) or down (below 1),
/// its value label beyond its end, and a dashed horizontal line marks 1.0.
///
/// The y axis does not start at 0: it spans the baseline and every value,
/// plus room for the labels (see `bar_y_range`), so that differences of a
/// few percent fill the plot instead of a sliver of it; a data span below
/// 0.04 is widened to 0.04 (centred) so that noise of a tenth of a percent
/// is not blown up either. A series equal to 1.0 in every category is the
/// baseline itself: it gets no bars (nor a slot in the groups) and appears
/// in the legend as the dashed line, e.g. "Deduplication = 1". Colours
/// still follow series order, so a scheme keeps its colour across figures
/// with the same series.
pub fn grouped_bars_normalized(
    stem: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<(), PlotError> {
    bars(stem, title, y_label, categories, series, Some(1.0))
}

/// Latency CDF: one line per series of `(latency in µs, cumulative
/// fraction)` points in increasing latency (see [`cdf_points_us`]); y runs
/// from 0 to 1, each curve rising from 0 at its first point.
///
/// The latency axis is always logarithmic, so that curves a few percent
/// apart (Deduplication, HAR, FCRC) separate instead of crowding the left
/// edge of an axis stretched to the longest tail. It covers the latencies
/// that matter: from the lowest 0.1st percentile of any series to the
/// highest 99.99th percentile, widened by 4% of that span (at least 0.05
/// decade) on each side and rounded outwards to a single significant digit
/// (e.g. 100 µs to 3 ms); a curve leaving that range is cut at the frame.
/// Ticks are labelled with units (`100 µs`, `1 ms`, `10 ms`) at every
/// decade, also at 2x and 5x when fewer than three decades are in range
/// (see `log_ticks`); every other 1..9 multiple gets a light grid line.
/// Points at or below 0 µs cannot be placed on a log axis and are left out;
/// if no point is positive, the figure is an error.
pub fn cdf(stem: &Path, title: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<(), PlotError> {
    check_points(stem, series)?;
    let (logged, lo, hi) = cdf_lines(series)
        .ok_or_else(|| bad_data(stem, "no positive latency: a logarithmic axis cannot show the CDF"))?;
    let fig = Lines {
        title,
        x_label: "Latency (log scale)",
        y_label: "Cumulative fraction",
        series: &logged,
        x_axis: XAxis::Log10Micros { lo, hi },
        y_fixed: Some((0.0, 1.0)),
        y_log: false,
        markers: false,
    };
    render(stem, CHART_SIZE, &Figure::Lines(fig))
}

/// Line plot of `(x, y)` series on linear axes, e.g. FAD's Fig. 15 (speedup
/// versus ρ). Points are joined in the order given; series with at most 40
/// points also get a marker on each point. The y range is the data's with
/// a 6% margin; when it spans 0, a darker line marks y = 0.
pub fn lines(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    check_points(stem, series)?;
    let fig =
        Lines { title, x_label, y_label, series, x_axis: XAxis::Linear, y_fixed: None, y_log: false, markers: true };
    render(stem, CHART_SIZE, &Figure::Lines(fig))
}

/// [`lines`] with latencies in µs on a logarithmic y axis (tails over
/// time: a P99 a hundred times the mean stays readable), ticks labelled
/// with units as [`cdf`]'s x axis. The axis spans the data, widened by 4%
/// of its span (at least 0.05 decade) on each side. Points at or below
/// 0 µs cannot be placed and are left out; if none is positive, the figure
/// is an error.
pub fn lines_log_latency(
    stem: &Path,
    title: &str,
    x_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    check_points(stem, series)?;
    let logged: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(n, pts)| (n.clone(), pts.iter().filter(|p| p.1 > 0.0).map(|&(x, y)| (x, y.log10())).collect()))
        .collect();
    let ys = logged.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
    let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
    if !lo.is_finite() {
        return Err(bad_data(stem, "no positive latency: a logarithmic axis cannot show it"));
    }
    let m = ((hi - lo) * 0.04).max(0.05);
    let fig = Lines {
        title,
        x_label,
        y_label: "Latency (log scale)",
        series: &logged,
        x_axis: XAxis::Linear,
        y_fixed: Some((lo - m, hi + m)),
        y_log: true,
        markers: false,
    };
    render(stem, CHART_SIZE, &Figure::Lines(fig))
}

/// A latency histogram as [`cdf`] points: (latency in µs, cumulative
/// fraction), from [`LatencyHistogram::cdf`].
pub fn cdf_points_us(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    h.cdf().into_iter().map(|(ns, f)| (ns as f64 / 1000.0, f)).collect()
}

// ---------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------

fn no_data(stem: &Path, reason: impl Into<String>) -> PlotError {
    PlotError::NoData { path: stem.to_path_buf(), reason: reason.into() }
}

fn bad_data(stem: &Path, reason: impl Into<String>) -> PlotError {
    PlotError::BadData { path: stem.to_path_buf(), reason: reason.into() }
}

fn bars(
    stem: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
    reference: Option<f64>,
) -> Result<(), PlotError> {
    if categories.is_empty() {
        return Err(no_data(stem, "no categories"));
    }
    if series.is_empty() {
        return Err(no_data(stem, "no series"));
    }
    for (name, values) in series {
        if values.len() != categories.len() {
            return Err(bad_data(
                stem,
                format!("series {name:?} has {} values for {} categories", values.len(), categories.len()),
            ));
        }
        for (v, c) in values.iter().zip(categories) {
            if !v.is_finite() || *v < 0.0 {
                return Err(bad_data(
                    stem,
                    format!("series {name:?}, category {c:?}: value {v} is not a finite non-negative number"),
                ));
            }
        }
    }
    let fig = Bars { title, y_label, categories, series, reference };
    render(stem, BARS_SIZE, &Figure::Bars(fig))
}

fn check_points(stem: &Path, series: &[(String, Vec<(f64, f64)>)]) -> Result<(), PlotError> {
    if series.is_empty() {
        return Err(no_data(stem, "no series"));
    }
    for (name, pts) in series {
        if pts.is_empty() {
            return Err(no_data(stem, format!("series {name:?} has no points")));
        }
        if let Some((i, (x, y))) = pts.iter().enumerate().find(|(_, (x, y))| !x.is_finite() || !y.is_finite()) {
            return Err(bad_data(stem, format!("series {name:?}, point {i}: ({x}, {y}) is not finite")));
        }
    }
    Ok(())
}

fn x_extent(series: &[(String, Vec<(f64, f64)>)]) -> (f64, f64) {
    let xs = series.iter().flat_map(|(_, p)| p.iter().map(|&(x, _)| x));
    xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)))
}

/// Lower end of a CDF's latency axis: the 0.1st percentile.
const CDF_LOW: f64 = 0.001;
/// Upper end of a CDF's latency axis: the 99.99th percentile.
const CDF_HIGH: f64 = 0.9999;

/// The latency at which a CDF (points in increasing latency) first reaches
/// fraction `q`; its last latency if it never does. `None` without points.
fn quantile_x(points: &[(f64, f64)], q: f64) -> Option<f64> {
    points.iter().find(|&&(_, f)| f >= q).or(points.last()).map(|&(x, _)| x)
}

/// `v` rounded down (`up == false`) or up to one significant digit, i.e. to
/// a multiple m·10^k with m in 1..=9 (e.g. 4270 -> 5000 up, 106 -> 100 down).
/// `v` must be positive.
fn round_one_digit(v: f64, up: bool) -> f64 {
    let p = 10f64.powf(v.log10().floor());
    let m = v / p;
    // Tolerance, so that 3000 (= 2.9999999 x 10^3 after rounding) stays 3000.
    let m = if up { (m - 1e-9).ceil() } else { (m + 1e-9).floor() };
    m.max(1.0) * p
}

/// The latency range (µs) of a CDF figure over series of positive-latency
/// points; see [`cdf`]. `None` if no series has a point.
fn cdf_x_range(series: &[Vec<(f64, f64)>]) -> Option<(f64, f64)> {
    let lo = series.iter().filter_map(|p| quantile_x(p, CDF_LOW)).reduce(f64::min)?;
    let hi = series.iter().filter_map(|p| quantile_x(p, CDF_HIGH)).reduce(f64::max)?;
    let (a, b) = (lo.log10(), hi.log10());
    let pad = ((b - a) * 0.04).max(0.05);
    Some((round_one_digit(10f64.powf(a - pad), false), round_one_digit(10f64.powf(b + pad), true)))
}

/// The lines of a CDF figure, (log10 µs, fraction) points cut to its range,
/// and that range (log10 µs); `None` if no latency is positive.
#[allow(clippy::type_complexity)]
fn cdf_lines(series: &[(String, Vec<(f64, f64)>)]) -> Option<(Vec<(String, Vec<(f64, f64)>)>, f64, f64)> {
    let positive: Vec<Vec<(f64, f64)>> =
        series.iter().map(|(_, p)| p.iter().copied().filter(|&(x, _)| x > 0.0).collect()).collect();
    let (lo, hi) = cdf_x_range(&positive)?;
    let (lo, hi) = (lo.log10(), hi.log10());
    let lines = series.iter().zip(&positive).map(|((name, _), p)| (name.clone(), cdf_polyline(p, lo, hi))).collect();
    Some((lines, lo, hi))
}

/// One CDF series as the line to draw on a log axis: (log10 latency,
/// fraction) points, starting with a vertical rise from 0 at the first
/// latency, cut at `lo` and `hi` (log10 µs) where it leaves the range.
fn cdf_polyline(points: &[(f64, f64)], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let mut line: Vec<(f64, f64)> = Vec::with_capacity(points.len() + 1);
    if let Some(&(x, f)) = points.first() {
        if f > 0.0 {
            line.push((x.log10(), 0.0));
        }
    }
    line.extend(points.iter().map(|&(x, f)| (x.log10(), f)));
    clip_x(&line, lo, hi)
}

/// The part of a polyline (x non-decreasing) with x in `[lo, hi]`: segments
/// crossing an end are cut there (linearly interpolated).
fn clip_x(line: &[(f64, f64)], lo: f64, hi: f64) -> Vec<(f64, f64)> {
    if let [p] = line {
        return if (lo..=hi).contains(&p.0) { vec![*p] } else { vec![] };
    }
    let mut out: Vec<(f64, f64)> = Vec::new();
    for w in line.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b.0 < lo || a.0 > hi {
            continue;
        }
        let at = |x: f64| if b.0 > a.0 { a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0) } else { a.1 };
        let start = if a.0 < lo { (lo, at(lo)) } else { a };
        let end = if b.0 > hi { (hi, at(hi)) } else { b };
        if out.last() != Some(&start) {
            out.push(start);
        }
        out.push(end);
    }
    out
}

/// Tick positions of a logarithmic axis over `[lo, hi]` (both positive):
/// `(labelled, light)`. Every power of ten in range is labelled; when fewer
/// than three are, so are the 2x and 5x multiples; when that still gives
/// fewer than two, every multiple m·10^k (m in 1..=9). All other such
/// multiples in range are light grid lines.
fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (k0, k1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let inside = |v: f64| v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9);
    let all: Vec<(u32, f64)> = (k0..=k1)
        .flat_map(|k| (1..=9).map(move |m| (m, f64::from(m) * 10f64.powi(k))))
        .filter(|&(_, v)| inside(v))
        .collect();
    let pick = |ms: &[u32]| -> Vec<f64> { all.iter().filter(|(m, _)| ms.contains(m)).map(|&(_, v)| v).collect() };
    let mut labelled = pick(&[1]);
    if labelled.len() < 3 {
        labelled = pick(&[1, 2, 5]);
    }
    if labelled.len() < 2 {
        labelled = pick(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
    let light = all.iter().map(|&(_, v)| v).filter(|v| !labelled.contains(v)).collect();
    (labelled, light)
}

/// A latency tick label with its unit: `500 µs`, `1 ms`, `2.5 ms`, `1 s`.
fn fmt_us(us: f64) -> String {
    // Values come back from log10 and may be a hair below a unit boundary.
    let near = |unit: f64| us >= unit * (1.0 - 1e-9);
    if near(1e6) {
        format!("{} s", fmt_tick(us / 1e6))
    } else if near(1e3) {
        format!("{} ms", fmt_tick(us / 1e3))
    } else {
        format!("{} µs", fmt_tick(us))
    }
}

// ---------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------

static FONT_INIT: Once = Once::new();

/// Registers DejaVu Sans (regular and bold) as plotters' `sans-serif`.
fn ensure_font() {
    FONT_INIT.call_once(|| {
        // The bytes are a valid TrueType font shipped by the `dejavu` crate;
        // a failure would only make text disappear, so it is not fatal.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s: OsString = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

struct Bars<'a> {
    title: &'a str,
    y_label: &'a str,
    categories: &'a [String],
    series: &'a [(String, Vec<f64>)],
    reference: Option<f64>,
}

struct Lines<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    series: &'a [(String, Vec<(f64, f64)>)],
    x_axis: XAxis,
    y_fixed: Option<(f64, f64)>,
    /// y values are log10(µs), drawn on a logarithmic latency axis.
    y_log: bool,
    /// Markers on the points of series with at most 40 points.
    markers: bool,
}

/// The x axis of a line figure.
#[derive(Clone, Copy)]
enum XAxis {
    /// Linear, over the data's range.
    Linear,
    /// Logarithmic latency: x values are log10(µs), the range is `[lo, hi]`
    /// (log10 µs), ticks from `log_ticks` labelled by [`fmt_us`].
    Log10Micros { lo: f64, hi: f64 },
}

enum Figure<'a> {
    Bars(Bars<'a>),
    Lines(Lines<'a>),
}

impl Figure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        match self {
            Figure::Bars(b) => draw_bars(root, b),
            Figure::Lines(l) => draw_lines(root, l),
        }
    }
}

fn render(stem: &Path, size: (u32, u32), fig: &Figure) -> Result<(), PlotError> {
    ensure_font();
    let svg_path = with_ext(stem, "svg");
    let png_path = with_ext(stem, "png");
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        let draw_err = |reason: String| PlotError::Draw { path: svg_path.clone(), reason };
        fig.draw(&root).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(e.to_string()))?;
    }
    crate::output::write_bytes(&svg_path, svg.as_bytes())?;
    // The PNG encoder writes its file itself: into a temporary file (same
    // extension) renamed into place.
    crate::output::replace_file(&png_path, |tmp| {
        let root = BitMapBackend::new(tmp, size).into_drawing_area();
        let draw_err = |reason: String| PlotError::Draw { path: png_path.clone(), reason };
        fig.draw(&root).map_err(draw_err)?;
        root.present().map_err(|e| draw_err(e.to_string()))
    })
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn font(px: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, px).into_font())
}

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// How a legend entry shows its series.
#[derive(Copy, Clone)]
enum Swatch {
    /// A filled box in the series colour (a bar series).
    Box,
    /// A solid line in the series colour (a line series).
    Line,
    /// A black dashed line: the baseline of a normalized bar chart.
    Dashed,
}

/// One legend entry: the text, how its series is shown, the series colour.
struct Entry {
    name: String,
    swatch: Swatch,
    color: RGBColor,
}

const SWATCH_W: i32 = 26;
const ENTRY_GAP: i32 = 28;
const ROW_H: i32 = 26;

/// One row of the legend: (entry index, entry width) pairs and the row's
/// total width in pixels.
#[derive(Default)]
struct LegendRow {
    entries: Vec<(usize, i32)>,
    width: i32,
}

/// Lays legend entries out in rows no wider than `width` (an entry wider
/// than that gets a row of its own).
fn legend_rows<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
    width: i32,
) -> Result<Vec<LegendRow>, String> {
    let style = font(LEGEND_PX);
    let mut rows: Vec<LegendRow> = Vec::new();
    let mut row = LegendRow::default();
    for (i, e) in entries.iter().enumerate() {
        let (tw, _) = area.estimate_text_size(&e.name, &style).map_err(err)?;
        let w = SWATCH_W + 8 + tw as i32;
        let needed = if row.entries.is_empty() { w } else { row.width + ENTRY_GAP + w };
        if needed > width && !row.entries.is_empty() {
            rows.push(std::mem::take(&mut row));
            row.entries.push((i, w));
            row.width = w;
        } else {
            row.entries.push((i, w));
            row.width = needed;
        }
    }
    rows.push(row);
    Ok(rows)
}

/// Splits a legend strip off the top of `area`, draws the legend in it and
/// returns the rest.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[Entry],
) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, _) = area.dim_in_pixel();
    let rows = legend_rows(area, entries, w as i32 - 40)?;
    let height = rows.len() as i32 * ROW_H + 8;
    let (strip, rest) = area.split_vertically(height);
    let style = font(LEGEND_PX).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let mut x = (w as i32 - row.width) / 2;
        let y = 4 + r as i32 * ROW_H + ROW_H / 2;
        for &(i, ew) in &row.entries {
            let e = &entries[i];
            match e.swatch {
                Swatch::Box => {
                    let corners = [(x + 4, y - 8), (x + SWATCH_W - 4, y + 8)];
                    strip.draw(&Rectangle::new(corners, e.color.filled())).map_err(err)?;
                    strip.draw(&Rectangle::new(corners, BLACK.stroke_width(1))).map_err(err)?;
                }
                Swatch::Line => {
                    strip
                        .draw(&PathElement::new(vec![(x, y), (x + SWATCH_W, y)], e.color.stroke_width(3)))
                        .map_err(err)?;
                }
                Swatch::Dashed => {
                    for x0 in [x, x + 10, x + 20] {
                        strip
                            .draw(&PathElement::new(vec![(x0, y), (x0 + 6, y)], BLACK.stroke_width(2)))
                            .map_err(err)?;
                    }
                }
            }
            strip.draw(&Text::new(e.name.clone(), (x + SWATCH_W + 8, y), style.clone())).map_err(err)?;
            x += ew + ENTRY_GAP;
        }
    }
    Ok(rest)
}

/// Draws the title (if any) and returns the area below it.
fn titled<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> Result<DrawingArea<DB, Shift>, String> {
    root.fill(&WHITE).map_err(err)?;
    if title.is_empty() {
        return Ok(root.clone());
    }
    root.titled(title, font(TITLE_PX)).map_err(err)
}

/// Tick formatting: integers without decimals, at most four decimals
/// otherwise (trailing zeros dropped), exponent notation for very large or
/// very small magnitudes.
fn fmt_tick(v: f64) -> String {
    let a = v.abs();
    if a < 1e-12 {
        return "0".into();
    }
    if !(1e-3..1e5).contains(&a) {
        let s = format!("{v:.1e}");
        return s.replace(".0e", "e");
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// "Nice" tick positions (1, 2 or 5 times a power of ten apart) covering
/// `[lo, hi]`: of the candidate steps, the one giving the tick count closest
/// to `target` (ties to the finer step). Returns the ticks and the step.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, f64) {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let count = |step: f64| ((hi / step + 1e-9).floor() - (lo / step - 1e-9).ceil() + 1.0).max(0.0);
    let mut step = mag;
    let mut best = f64::INFINITY;
    for m in [1.0, 2.0, 5.0, 10.0] {
        let d = (count(m * mag) - target as f64).abs();
        if d < best {
            best = d;
            step = m * mag;
        }
    }
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let ticks = (first..=last).map(|k| k as f64 * step).map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t }).collect();
    (ticks, step)
}

/// A linear f64 axis whose tick marks (bold points) and light grid lines
/// are given explicitly, so figures never depend on plotters' tick
/// heuristics (and a log axis is a linear axis over log10 values).
struct Axis {
    lo: f64,
    hi: f64,
    bold: Vec<f64>,
    light: Vec<f64>,
}

impl Axis {
    fn new(lo: f64, hi: f64, bold: Vec<f64>, light: Vec<f64>) -> Axis {
        Axis { lo, hi, bold, light }
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let frac = if span > 0.0 { (value - self.lo) / span } else { 0.0 };
        let px = f64::from(limit.1 - limit.0) * frac + 1e-3;
        // Saturating float-to-int cast; values far outside the range stay far.
        limit.0.saturating_add(px.floor().clamp(-1e7, 1e7) as i32)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

/// Pixel size of the value labels on bars.
const VALUE_PX: u32 = 14;
/// Smallest font the value labels shrink to before they are left out.
const VALUE_MIN_PX: u32 = 9;
/// Pixels between a bar's end and its value label.
const VALUE_GAP: f64 = 3.0;
/// The narrowest y span (in data units, before room for labels) of a
/// normalized bar chart, so that differences of a few tenths of a percent
/// do not fill the whole height.
const MIN_NORMALIZED_SPAN: f64 = 0.04;
/// Fraction of each category's width taken by its bars.
const GROUP_FILL: f64 = 0.8;

// Chart margins of bar charts (pixels), needed to size the plotting area
// before the chart is built.
const BARS_MARGIN_TOP: u32 = 6;
const BARS_MARGIN_BOTTOM: u32 = 8;
const BARS_MARGIN_LEFT: u32 = 10;
const BARS_MARGIN_RIGHT: u32 = 20;
const BARS_X_LABELS: u32 = 34;
const BARS_Y_LABELS: u32 = 72;

/// The text on a bar: four significant digits up to 1000, so that a
/// normalized value shows a 0.1% difference ("0.931", "1.032", "4.690") and
/// reads the same as the report's tables (three decimals); whole numbers
/// from 1000 on.
fn value_label(v: f64) -> String {
    let a = v.abs();
    let decimals = if a < 10.0 {
        3
    } else if a < 100.0 {
        2
    } else if a < 1000.0 {
        1
    } else {
        0
    };
    format!("{v:.decimals$}")
}

/// How the value labels of a bar chart are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ValueLabels {
    /// Horizontal, `px` high: every label fits within its bar's width.
    Flat { px: u32 },
    /// Rotated to read upwards, `px` high: the bars are too narrow for flat
    /// labels but at least as wide as the text is high.
    Upright { px: u32 },
    /// Bars narrower than the smallest text: no labels.
    None,
}

/// Chooses the labels' orientation and size from the bar width and the
/// label sizes at each font size (`sizes(px)` = widest label's (width,
/// height)): flat at [`VALUE_PX`] if the widest fits its bar, otherwise
/// upright at the largest size from [`VALUE_PX`] down to [`VALUE_MIN_PX`]
/// whose text height fits, otherwise none. Returns the choice and the extent
/// of a label along the bar (pixels).
fn value_labels(bar_px: f64, sizes: impl Fn(u32) -> (u32, u32)) -> (ValueLabels, f64) {
    let (w, h) = sizes(VALUE_PX);
    if f64::from(w) + 2.0 <= bar_px {
        return (ValueLabels::Flat { px: VALUE_PX }, f64::from(h));
    }
    for px in (VALUE_MIN_PX..=VALUE_PX).rev() {
        let (w, h) = sizes(px);
        if f64::from(h) <= bar_px {
            return (ValueLabels::Upright { px }, f64::from(w));
        }
    }
    (ValueLabels::None, 0.0)
}

/// The y range of a bar chart `plot_px` pixels high whose bars start at
/// `base` (the reference value of a normalized chart, else 0): the range
/// always holds `base` and every value, with `pad_below` / `pad_above`
/// pixels to spare below the lowest and above the highest (for value labels
/// and air). A normalized chart spans at least [`MIN_NORMALIZED_SPAN`]
/// (centred on the data) before the padding.
fn bar_y_range(
    values: &[f64],
    base: f64,
    normalized: bool,
    pad_below: f64,
    pad_above: f64,
    plot_px: f64,
) -> (f64, f64) {
    let (mut lo, mut hi) = values.iter().fold((base, base), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let min_span = if normalized { MIN_NORMALIZED_SPAN } else { f64::MIN_POSITIVE.max(hi.abs() * 1e-9).max(1e-9) };
    if hi - lo < min_span {
        let extra = min_span - (hi - lo);
        if normalized {
            lo -= extra / 2.0;
            hi += extra / 2.0;
        } else {
            hi += extra;
        }
    }
    // The data take what is left of the height after the padding (at least
    // a third of it, however large the labels).
    let data_px = (plot_px - pad_below - pad_above).max(plot_px / 3.0).max(1.0);
    let per_px = (hi - lo) / data_px;
    (lo - pad_below * per_px, hi + pad_above * per_px)
}

fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &Bars) -> Result<(), String> {
    let area = titled(root, b.title)?;
    // A series equal to the reference in every category is the baseline
    // itself: it is the dashed line (and its legend entry), not a row of
    // bars of zero height taking a slot in every group.
    let is_baseline = |v: &[f64]| b.reference.is_some_and(|r| v.iter().all(|&x| x == r));
    let entries: Vec<Entry> = b
        .series
        .iter()
        .enumerate()
        .map(|(j, (name, v))| match b.reference {
            Some(r) if is_baseline(v) => {
                Entry { name: format!("{name} = {}", fmt_tick(r)), swatch: Swatch::Dashed, color: BLACK }
            }
            _ => Entry { name: name.clone(), swatch: Swatch::Box, color: color(j) },
        })
        .collect();
    let plot = legend(&area, &entries)?;
    let drawn: Vec<usize> = (0..b.series.len()).filter(|&j| !is_baseline(&b.series[j].1)).collect();

    let n = b.categories.len();
    let base = b.reference.unwrap_or(0.0);
    let (w, h) = plot.dim_in_pixel();
    let plot_w = f64::from(w.saturating_sub(BARS_MARGIN_LEFT + BARS_MARGIN_RIGHT + BARS_Y_LABELS));
    let plot_h = f64::from(h.saturating_sub(BARS_MARGIN_TOP + BARS_MARGIN_BOTTOM + BARS_X_LABELS));
    let group_px = plot_w / n as f64;
    let bw = GROUP_FILL / drawn.len().max(1) as f64;

    // Value labels: their size decides the room left above and below.
    let labels: Vec<String> = drawn.iter().flat_map(|&j| b.series[j].1.iter().map(|&v| value_label(v))).collect();
    let widest = |px: u32| -> (u32, u32) {
        labels
            .iter()
            .filter_map(|t| plot.estimate_text_size(t, &font(px)).ok())
            .fold((0, 0), |(w, h), (tw, th)| (w.max(tw), h.max(th)))
    };
    let (value_style, extent) = value_labels(group_px * bw, widest);
    let values: Vec<f64> = drawn.iter().flat_map(|&j| b.series[j].1.iter().copied()).collect();
    let room = |needed: bool| if needed && value_style != ValueLabels::None { extent + VALUE_GAP + 6.0 } else { 8.0 };
    let pad_above = room(values.iter().any(|&v| v >= base));
    let pad_below = if b.reference.is_some() { room(values.iter().any(|&v| v < base)) } else { 0.0 };
    let (y0, y1) = bar_y_range(&values, base, b.reference.is_some(), pad_below, pad_above, plot_h);
    let (y_ticks, _) = nice_ticks(y0, y1, 6);
    let centers: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();

    // Category labels: shrink the font if the longest does not fit its group.
    let mut label_px = LABEL_PX;
    for px in [LABEL_PX, 14, 12, 10] {
        label_px = px;
        let widest = b
            .categories
            .iter()
            .map(|c| plot.estimate_text_size(c, &font(px)).map(|(tw, _)| tw))
            .try_fold(0u32, |m, r| r.map(|tw| m.max(tw)))
            .map_err(err)?;
        if f64::from(widest) <= group_px * 0.95 {
            break;
        }
    }

    let mut chart = ChartBuilder::on(&plot)
        .margin_left(BARS_MARGIN_LEFT)
        .margin_right(BARS_MARGIN_RIGHT)
        .margin_top(BARS_MARGIN_TOP)
        .margin_bottom(BARS_MARGIN_BOTTOM)
        .x_label_area_size(BARS_X_LABELS)
        .y_label_area_size(BARS_Y_LABELS)
        .build_cartesian_2d(Axis::new(0.0, n as f64, centers, vec![]), Axis::new(y0, y1, y_ticks, vec![]))
        .map_err(err)?;
    let cat_label = |x: &f64| {
        let i = x.floor();
        if i >= 0.0 && (i as usize) < n {
            b.categories[i as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&cat_label)
        .y_label_formatter(&|v| fmt_tick(*v))
        .x_label_style(font(label_px))
        .y_label_style(font(LABEL_PX))
        .y_desc(b.y_label)
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(err)?;

    // A summary category ("Avg.") last: set apart by a thin rule.
    if n > 1 && b.categories[n - 1] == "Avg." {
        let x = (n - 1) as f64;
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x, y0), (x, y1)], GRID.stroke_width(2))))
            .map_err(err)?;
    }

    for (slot, &j) in drawn.iter().enumerate() {
        let (_, values) = &b.series[j];
        let c = color(j);
        let rect = |i: usize, v: f64| {
            let x0 = i as f64 + (1.0 - GROUP_FILL) / 2.0 + slot as f64 * bw;
            [(x0, base), (x0 + bw, v)]
        };
        chart
            .draw_series(values.iter().enumerate().map(|(i, &v)| Rectangle::new(rect(i, v), c.filled())))
            .map_err(err)?;
        chart
            .draw_series(
                values.iter().enumerate().map(|(i, &v)| Rectangle::new(rect(i, v), BLACK.mix(0.8).stroke_width(1))),
            )
            .map_err(err)?;
    }
    if let Some(r) = b.reference {
        chart
            .draw_series(DashedLineSeries::new(vec![(0.0, r), (n as f64, r)], 8, 5, BLACK.stroke_width(2)))
            .map_err(err)?;
    }
    // Labels last, so that no bar or line is drawn over one. Each sits
    // beyond its bar's free end: above a bar going up, below one going down.
    let gap = VALUE_GAP as i32;
    for (slot, &j) in drawn.iter().enumerate() {
        for (i, &v) in b.series[j].1.iter().enumerate() {
            let x = i as f64 + (1.0 - GROUP_FILL) / 2.0 + (slot as f64 + 0.5) * bw;
            let up = v >= base;
            let (style, offset) = match value_style {
                ValueLabels::None => continue,
                ValueLabels::Flat { px } => {
                    let v = if up { VPos::Bottom } else { VPos::Top };
                    (font(px).pos(Pos::new(HPos::Center, v)), if up { -gap } else { gap })
                }
                ValueLabels::Upright { px } => {
                    // Rotated a quarter turn anticlockwise: the text's start
                    // is at the bottom, so "left" anchors the lower end.
                    let hp = if up { HPos::Left } else { HPos::Right };
                    (
                        font(px).transform(FontTransform::Rotate270).pos(Pos::new(hp, VPos::Center)),
                        if up { -gap } else { gap },
                    )
                }
            };
            chart
                .plotting_area()
                .draw(&(EmptyElement::at((x, v)) + Text::new(value_label(v), (0, offset), style)))
                .map_err(err)?;
        }
    }
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, l: &Lines) -> Result<(), String> {
    let area = titled(root, l.title)?;
    let entries: Vec<Entry> = l
        .series
        .iter()
        .enumerate()
        .map(|(j, (n, _))| Entry { name: n.clone(), swatch: Swatch::Line, color: color(j) })
        .collect();
    let plot = legend(&area, &entries)?;

    let (x0, x1, x_ticks, x_light) = match l.x_axis {
        XAxis::Log10Micros { lo, hi } => {
            let (ticks, light) = log_ticks(10f64.powf(lo), 10f64.powf(hi));
            let log = |v: Vec<f64>| v.into_iter().map(f64::log10).collect::<Vec<f64>>();
            (lo, hi, log(ticks), log(light))
        }
        XAxis::Linear => {
            let (xlo, xhi) = x_extent(l.series);
            let (lo, hi) = if xhi > xlo { (xlo, xhi) } else { (xlo - 0.5, xhi + 0.5) };
            let ticks = nice_ticks(lo, hi, 8).0;
            let light = nice_ticks(lo, hi, 8 * 2).0;
            (lo, hi, ticks, light)
        }
    };
    let (y0, y1) = match l.y_fixed {
        Some(r) => r,
        None => {
            let ys = l.series.iter().flat_map(|(_, p)| p.iter().map(|&(_, y)| y));
            let (lo, hi) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)));
            if hi > lo {
                let m = (hi - lo) * 0.06;
                (lo - m, hi + m)
            } else {
                let m = if lo.abs() > 0.0 { lo.abs() * 0.1 } else { 1.0 };
                (lo - m, hi + m)
            }
        }
    };
    let (y_ticks, y_light) = if l.y_log {
        let (ticks, light) = log_ticks(10f64.powf(y0), 10f64.powf(y1));
        let log = |v: Vec<f64>| v.into_iter().map(f64::log10).collect::<Vec<f64>>();
        (log(ticks), log(light))
    } else {
        (nice_ticks(y0, y1, 6).0, vec![])
    };

    let mut chart = ChartBuilder::on(&plot)
        .margin_left(10)
        .margin_right(30)
        .margin_top(6)
        .margin_bottom(8)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(Axis::new(x0, x1, x_ticks, x_light), Axis::new(y0, y1, y_ticks, y_light))
        .map_err(err)?;
    let x_fmt = |v: &f64| match l.x_axis {
        XAxis::Log10Micros { .. } => fmt_us(10f64.powf(*v)),
        XAxis::Linear => fmt_tick(*v),
    };
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(LIGHT_GRID)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| if l.y_log { fmt_us(10f64.powf(*v)) } else { fmt_tick(*v) })
        .label_style(font(LABEL_PX))
        .x_desc(l.x_label)
        .y_desc(l.y_label)
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(err)?;
    if y0 < 0.0 && y1 > 0.0 {
        // Signed data (a speedup): the sign change is what a reader looks for.
        chart
            .draw_series(std::iter::once(PathElement::new(vec![(x0, 0.0), (x1, 0.0)], ZERO_LINE.stroke_width(1))))
            .map_err(err)?;
    }

    for (j, (_, pts)) in l.series.iter().enumerate() {
        let c = color(j);
        chart.draw_series(LineSeries::new(pts.iter().copied(), c.stroke_width(2))).map_err(err)?;
        if l.markers && pts.len() <= 40 {
            chart.draw_series(pts.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        let (t, s) = nice_ticks(0.0, 1.12, 6);
        assert_eq!(s, 0.2);
        assert_eq!(t.len(), 6);
        assert_eq!(fmt_tick(t[3]), "0.6");
        let (t, _) = nice_ticks(-3.0, 17.0, 4);
        assert_eq!(t, vec![0.0, 5.0, 10.0, 15.0]);
        assert_eq!(fmt_tick(1.0), "1");
        assert_eq!(fmt_tick(0.25), "0.25");
        assert_eq!(fmt_tick(1e6), "1e6");
        assert_eq!(fmt_tick(2.5e5), "2.5e5");
        assert_eq!(fmt_tick(10000.0), "10000");
        assert_eq!(fmt_tick(0.0), "0");
    }

    /// The SVG text of a figure, drawn in memory.
    fn svg_of(fig: &Figure, size: (u32, u32)) -> String {
        ensure_font();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            fig.draw(&root).unwrap();
            root.present().unwrap();
        }
        svg
    }

    #[test]
    fn value_labels_show_a_tenth_of_a_percent() {
        assert_eq!(value_label(0.9312), "0.931");
        assert_eq!(value_label(1.0), "1.000");
        assert_eq!(value_label(0.9996), "1.000");
        assert_eq!(value_label(4.6894), "4.689");
        assert_eq!(value_label(12.5), "12.50");
        assert_eq!(value_label(250.25), "250.2");
        assert_eq!(value_label(1234.6), "1235");
        assert_eq!(value_label(0.0), "0.000");
    }

    #[test]
    fn value_labels_lie_flat_turn_upright_or_go() {
        // A label 30 px wide and 12 px high at the largest size, smaller below.
        let sizes = |px: u32| (30 * px / VALUE_PX, px - 2);
        assert_eq!(value_labels(40.0, sizes), (ValueLabels::Flat { px: VALUE_PX }, f64::from(VALUE_PX - 2)));
        assert_eq!(value_labels(20.0, sizes), (ValueLabels::Upright { px: VALUE_PX }, 30.0));
        // Text 11 px high at 13 px: the largest size that fits a 11 px bar.
        let (style, _) = value_labels(11.0, sizes);
        assert_eq!(style, ValueLabels::Upright { px: 13 });
        assert_eq!(value_labels(5.0, sizes), (ValueLabels::None, 0.0));
    }

    #[test]
    fn normalized_y_range_holds_the_baseline_every_value_and_little_else() {
        let contains = |(lo, hi): (f64, f64), vs: &[f64]| vs.iter().all(|v| (lo..=hi).contains(v));
        // A few percent below the baseline: no zero, a tight range.
        let vs = [0.931, 0.953, 0.971, 0.999];
        let r = bar_y_range(&vs, 1.0, true, 40.0, 40.0, 400.0);
        assert!(contains(r, &vs) && contains(r, &[1.0]), "{r:?}");
        assert!(r.0 > 0.85 && r.1 < 1.05, "not tight around 0.93..1: {r:?}");
        // Room for labels: 40 px of 400 below the lowest value.
        let per_px = (r.1 - r.0) / 400.0;
        assert!((0.931 - r.0) / per_px >= 39.9, "{r:?}");
        // Far above the baseline: 1.0 still inside.
        let vs = [1.136, 4.689];
        let r = bar_y_range(&vs, 1.0, true, 8.0, 30.0, 400.0);
        assert!(contains(r, &vs) && r.0 < 1.0 && r.0 > 0.8, "{r:?}");
        // Differences of a tenth of a percent do not fill the height.
        let r = bar_y_range(&[0.999, 1.001], 1.0, true, 0.0, 0.0, 400.0);
        assert!(r.1 - r.0 >= MIN_NORMALIZED_SPAN - 1e-12, "{r:?}");
        assert!(contains(r, &[1.0]));
        // Plain bars start at 0.
        let r = bar_y_range(&[3.0, 7.0], 0.0, false, 0.0, 20.0, 400.0);
        assert_eq!(r.0, 0.0);
        assert!(r.1 > 7.0 && r.1 < 8.0, "{r:?}");
    }

    #[test]
    fn log_ticks_are_decades_with_units() {
        let (t, light) = log_ticks(10.0, 1e5);
        assert_eq!(t, vec![10.0, 100.0, 1000.0, 10000.0, 100000.0]);
        assert!(light.contains(&200.0) && light.contains(&5000.0) && !light.contains(&1000.0));
        // Fewer than three decades: 2x and 5x labelled too.
        let (t, light) = log_ticks(100.0, 3000.0);
        assert_eq!(t, vec![100.0, 200.0, 500.0, 1000.0, 2000.0]);
        assert!(light.contains(&300.0) && light.contains(&3000.0) && !light.contains(&200.0));
        // Inside one decade: every single-digit multiple.
        let (t, _) = log_ticks(300.0, 400.0);
        assert_eq!(t, vec![300.0, 400.0]);
        let labels: Vec<String> = [100.0, 1000.0, 10000.0, 2500.0, 2e6].into_iter().map(fmt_us).collect();
        assert_eq!(labels, ["100 µs", "1 ms", "10 ms", "2.5 ms", "2 s"]);
        // As the axis formats them: from log10 and back.
        assert_eq!(fmt_us(10f64.powf(2000f64.log10())), "2 ms");
        assert_eq!(fmt_us(10f64.powf(3.0)), "1 ms");
    }

    #[test]
    fn cdf_range_runs_from_the_0_1st_to_the_99_99th_percentile() {
        assert_eq!(round_one_digit(4270.0, true), 5000.0);
        assert_eq!(round_one_digit(106.0, false), 100.0);
        assert_eq!(round_one_digit(3000.0, true), 3000.0);
        assert_eq!(round_one_digit(3000.0, false), 3000.0);
        // 100 000 reads from 120 µs to 2 ms, and one (the 0.001% tail) at 1 s.
        let n = 100_000;
        let mut a: Vec<(f64, f64)> =
            (1..n).map(|i| (120.0 * (2000.0f64 / 120.0).powf(i as f64 / n as f64), i as f64 / n as f64)).collect();
        a.push((1e6, 1.0));
        let b: Vec<(f64, f64)> = vec![(150.0, 0.5), (900.0, 1.0)];
        let (lo, hi) = cdf_x_range(&[a, b]).unwrap();
        assert_eq!((lo, hi), (100.0, 3000.0));
        assert_eq!(cdf_x_range(&[vec![], vec![]]), None);
    }

    #[test]
    fn cdf_lines_rise_from_zero_and_are_cut_at_the_frame() {
        let pts = [(100.0, 0.4), (1000.0, 0.9), (10000.0, 1.0)];
        // Whole line inside: a vertical rise from 0 at 100 µs first.
        let line = cdf_polyline(&pts, 1.0, 5.0);
        assert_eq!(line, vec![(2.0, 0.0), (2.0, 0.4), (3.0, 0.9), (4.0, 1.0)]);
        // Cut at 10^2.5 and 10^3.5: interpolated on the drawn (log) line.
        let line = cdf_polyline(&pts, 2.5, 3.5);
        assert_eq!(line, vec![(2.5, 0.65), (3.0, 0.9), (3.5, 0.95)]);
        assert_eq!(clip_x(&[(1.0, 0.5)], 0.0, 2.0), vec![(1.0, 0.5)]);
        assert!(clip_x(&[(3.0, 0.5)], 0.0, 2.0).is_empty());
    }

    #[test]
    fn normalized_bars_label_every_bar_and_draw_the_baseline_as_the_line() {
        let cats: Vec<String> = ["a", "b", "Avg."].iter().map(|s| s.to_string()).collect();
        let series = vec![("Dedup".to_string(), vec![1.0, 1.0, 1.0]), ("FAD".to_string(), vec![0.934, 1.021, 0.9775])];
        let fig =
            Figure::Bars(Bars { title: "t", y_label: "y", categories: &cats, series: &series, reference: Some(1.0) });
        let svg = svg_of(&fig, BARS_SIZE);
        for label in ["0.934", "1.021", "0.978", "Dedup = 1"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "{label} missing");
        }
        // The baseline series has no bars (and so no labels): only FAD's three.
        assert!(!svg.contains(">\n1.000\n<"));
        // Colours by series index: Dedup's (the first) is unused, FAD's (the
        // second) fills its three bars and its legend box.
        assert_eq!(svg.matches("fill=\"#1F77B4\"").count(), 0, "bars drawn for the baseline series");
        assert_eq!(svg.matches("fill=\"#FF7F0E\"").count(), 3 + 1);
        // The y axis no longer starts at 0.
        assert!(!svg.contains(">\n0\n<"), "a 0 tick on a 0.93..1.02 chart");
    }

    #[test]
    fn cdf_axis_is_logarithmic_with_units() {
        let a: Vec<(f64, f64)> = (1..=100).map(|i| (100.0 * 1.05f64.powi(i), f64::from(i) / 100.0)).collect();
        let stem = Path::new("/nonexistent/cdf");
        let e = cdf(stem, "t", &[("z".to_string(), vec![(0.0, 1.0)])]).unwrap_err();
        assert!(e.to_string().contains("no positive latency"), "{e}");
        // Points at 0 are dropped, not an error.
        let (logged, lo, hi) = cdf_lines(&[("s".to_string(), a), ("z".to_string(), vec![(0.0, 1.0)])]).unwrap();
        assert_eq!((10f64.powf(lo).round(), 10f64.powf(hi).round()), (80.0, 20000.0));
        assert!(logged[1].1.is_empty());
        let fig = Figure::Lines(Lines {
            title: "t",
            x_label: "Latency (log scale)",
            y_label: "Cumulative fraction",
            series: &logged,
            x_axis: XAxis::Log10Micros { lo, hi },
            y_fixed: Some((0.0, 1.0)),
            y_log: false,
            markers: false,
        });
        let svg = svg_of(&fig, CHART_SIZE);
        for label in ["100 µs", "1 ms", "10 ms"] {
            assert!(svg.contains(&format!(">\n{label}\n<")), "{label} missing");
        }
    }

    #[test]
    fn stems_keep_dots() {
        assert_eq!(with_ext(Path::new("out/fig.12"), "svg"), PathBuf::from("out/fig.12.svg"));
    }

    #[test]
    fn bad_input_is_an_error() {
        let stem = Path::new("/nonexistent/x");
        let cats = vec!["a".to_string()];
        let e = grouped_bars(stem, "t", "y", &cats, &[]).unwrap_err();
        assert!(matches!(e, PlotError::NoData { .. }), "{e}");
        let e = grouped_bars(stem, "t", "y", &cats, &[("s".into(), vec![f64::NAN])]).unwrap_err();
        assert!(e.to_string().contains("not a finite"), "{e}");
        let e = grouped_bars(stem, "t", "y", &cats, &[("s".into(), vec![1.0, 2.0])]).unwrap_err();
        assert!(e.to_string().contains("2 values for 1 categories"), "{e}");
        let e = lines(stem, "t", "x", "y", &[("s".into(), vec![])]).unwrap_err();
        assert!(e.to_string().contains("has no points"), "{e}");
        let e = cdf(stem, "t", &[("s".into(), vec![(f64::INFINITY, 0.5)])]).unwrap_err();
        assert!(matches!(e, PlotError::BadData { .. }), "{e}");
        // A directory that does not exist: an I/O error naming the SVG.
        let e = grouped_bars(stem, "t", "y", &cats, &[("s".into(), vec![1.0])]).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/x.svg"), "{e}");
    }
}
