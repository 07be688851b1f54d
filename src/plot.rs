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
//!   points, NaN or infinite values, negative bar heights, non-positive
//!   values on a log axis.
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
/// y axis starts at 0 with about 12% headroom above the tallest bar.
/// 1200x500 pixels.
pub fn grouped_bars(
    stem: &Path,
    title: &str,
    y_label: &str,
    categories: &[String],
    series: &[(String, Vec<f64>)],
) -> Result<(), PlotError> {
    bars(stem, title, y_label, categories, series, None)
}

/// [`grouped_bars`] for values normalized to a baseline: also draws a dashed
/// horizontal reference line at 1.0 (and keeps 1.0 inside the y range).
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
/// fraction)` points (see [`cdf_points_us`]); y runs from 0 to 1. The x
/// axis is logarithmic (ticks at powers of ten) when every latency is
/// positive and they span more than two decades (max / min > 100), linear
/// otherwise.
pub fn cdf(stem: &Path, title: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<(), PlotError> {
    check_points(stem, series)?;
    let (lo, hi) = x_extent(series);
    let log = lo > 0.0 && hi / lo > 100.0;
    let fig = Lines {
        title,
        x_label: "Latency (µs)",
        y_label: "Cumulative fraction",
        series,
        x_log: log,
        y_fixed: Some((0.0, 1.0)),
    };
    render(stem, CHART_SIZE, &Figure::Lines(fig))
}

/// Line plot of `(x, y)` series on linear axes, e.g. FAD's Fig. 15 (speedup
/// versus ρ). Points are joined in the order given; series with at most 40
/// points also get a marker on each point. The y range is the data's with
/// a 6% margin.
pub fn lines(
    stem: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> Result<(), PlotError> {
    check_points(stem, series)?;
    let fig = Lines { title, x_label, y_label, series, x_log: false, y_fixed: None };
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
    x_log: bool,
    y_fixed: Option<(f64, f64)>,
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
    Box,
    Line,
}

const SWATCH_W: i32 = 26;
const ENTRY_GAP: i32 = 28;
const ROW_H: i32 = 26;

/// One row of the legend: (series index, entry width) pairs and the row's
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
    names: &[&str],
    width: i32,
) -> Result<Vec<LegendRow>, String> {
    let style = font(LEGEND_PX);
    let mut rows: Vec<LegendRow> = Vec::new();
    let mut row = LegendRow::default();
    for (i, name) in names.iter().enumerate() {
        let (tw, _) = area.estimate_text_size(name, &style).map_err(err)?;
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
    names: &[&str],
    swatch: Swatch,
) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, _) = area.dim_in_pixel();
    let rows = legend_rows(area, names, w as i32 - 40)?;
    let height = rows.len() as i32 * ROW_H + 8;
    let (strip, rest) = area.split_vertically(height);
    let style = font(LEGEND_PX).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in rows.iter().enumerate() {
        let mut x = (w as i32 - row.width) / 2;
        let y = 4 + r as i32 * ROW_H + ROW_H / 2;
        for &(i, ew) in &row.entries {
            let c = color(i);
            match swatch {
                Swatch::Box => {
                    strip
                        .draw(&Rectangle::new([(x + 4, y - 8), (x + SWATCH_W - 4, y + 8)], c.filled()))
                        .map_err(err)?;
                    strip
                        .draw(&Rectangle::new([(x + 4, y - 8), (x + SWATCH_W - 4, y + 8)], BLACK.stroke_width(1)))
                        .map_err(err)?;
                }
                Swatch::Line => {
                    strip.draw(&PathElement::new(vec![(x, y), (x + SWATCH_W, y)], c.stroke_width(3))).map_err(err)?;
                }
            }
            strip.draw(&Text::new(names[i].to_string(), (x + SWATCH_W + 8, y), style.clone())).map_err(err)?;
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

fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &Bars) -> Result<(), String> {
    let area = titled(root, b.title)?;
    let names: Vec<&str> = b.series.iter().map(|(n, _)| n.as_str()).collect();
    let plot = legend(&area, &names, Swatch::Box)?;

    let n = b.categories.len();
    let max = b.series.iter().flat_map(|(_, v)| v.iter().copied()).fold(b.reference.unwrap_or(0.0), f64::max);
    let top = if max > 0.0 { max * 1.12 } else { 1.0 };
    let (y_ticks, _) = nice_ticks(0.0, top, 6);
    let centers: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();

    // Category labels: shrink the font if the longest does not fit its group.
    let (w, _) = plot.dim_in_pixel();
    let group_px = (w as f64 - 110.0) / n as f64;
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
        .margin_left(10)
        .margin_right(20)
        .margin_top(6)
        .margin_bottom(8)
        .x_label_area_size(34)
        .y_label_area_size(72)
        .build_cartesian_2d(Axis::new(0.0, n as f64, centers, vec![]), Axis::new(0.0, top, y_ticks, vec![]))
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

    let k = b.series.len() as f64;
    let inner = 0.8;
    let bw = inner / k;
    for (j, (_, values)) in b.series.iter().enumerate() {
        let c = color(j);
        let rect = |i: usize, v: f64| {
            let x0 = i as f64 + (1.0 - inner) / 2.0 + j as f64 * bw;
            [(x0, 0.0), (x0 + bw, v)]
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
    Ok(())
}

fn draw_lines<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, l: &Lines) -> Result<(), String> {
    let area = titled(root, l.title)?;
    let names: Vec<&str> = l.series.iter().map(|(n, _)| n.as_str()).collect();
    let plot = legend(&area, &names, Swatch::Line)?;

    let tx = |x: f64| if l.x_log { x.log10() } else { x };
    let (xlo, xhi) = x_extent(l.series);
    let (x0, x1, x_ticks, x_light) = if l.x_log {
        let (a, b) = (xlo.log10().floor(), xhi.log10().ceil().max(xlo.log10().floor() + 1.0));
        let ticks: Vec<f64> = (a as i64..=b as i64).map(|k| k as f64).collect();
        let light: Vec<f64> =
            (a as i64..b as i64).flat_map(|k| (2..10).map(move |m| k as f64 + f64::from(m).log10())).collect();
        (a, b, ticks, light)
    } else {
        let (lo, hi) = if xhi > xlo { (xlo, xhi) } else { (xlo - 0.5, xhi + 0.5) };
        let ticks = nice_ticks(lo, hi, 8).0;
        let light = nice_ticks(lo, hi, 8 * 2).0;
        (lo, hi, ticks, light)
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
    let (y_ticks, _) = nice_ticks(y0, y1, 6);

    let mut chart = ChartBuilder::on(&plot)
        .margin_left(10)
        .margin_right(30)
        .margin_top(6)
        .margin_bottom(8)
        .x_label_area_size(56)
        .y_label_area_size(72)
        .build_cartesian_2d(Axis::new(x0, x1, x_ticks, x_light), Axis::new(y0, y1, y_ticks, vec![]))
        .map_err(err)?;
    let x_fmt = |v: &f64| if l.x_log { fmt_tick(10f64.powf(*v)) } else { fmt_tick(*v) };
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(LIGHT_GRID)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&|v| fmt_tick(*v))
        .label_style(font(LABEL_PX))
        .x_desc(l.x_label)
        .y_desc(l.y_label)
        .axis_desc_style(font(DESC_PX))
        .draw()
        .map_err(err)?;

    for (j, (_, pts)) in l.series.iter().enumerate() {
        let c = color(j);
        let mapped: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (tx(x), y)).collect();
        chart.draw_series(LineSeries::new(mapped.iter().copied(), c.stroke_width(2))).map_err(err)?;
        if pts.len() <= 40 {
            chart.draw_series(mapped.iter().map(|&p| Circle::new(p, 4, c.filled()))).map_err(err)?;
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
