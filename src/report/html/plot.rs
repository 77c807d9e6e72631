//! The two chart shapes of the HTML report, drawn by `plotters` into inline SVG: horizontal
//! bars over categories ([`Bars`]) and lines over a numeric x axis ([`Lines`]).
//!
//! Only plotters' SVG backend is used, with no font files: plotters' built-in size estimate
//! lays text out and the browser draws it with its own `sans-serif`, so neither the build
//! nor the output depends on fonts on the machine. Which view gets which chart is
//! [`super::charts`]' business; this module knows nothing of views.

use anyhow::{Result, anyhow};
use plotters::coord::CoordTranslate;
use plotters::prelude::*;

/// Series colours (a colour-blind-safe qualitative set, Okabe & Ito 2008).
const COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(204, 121, 167),
    RGBColor(240, 228, 66),
    RGBColor(100, 100, 100),
];

/// The colour of series `i` (the palette repeats after eight).
fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn plot_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("chart: {e}")
}

/// A bar chart over categories: one bar per series and category (grouped), or the
/// series stacked; optional intervals on the first series and a reference line.
pub(super) struct Bars {
    pub title: String,
    /// What the values measure (the value axis' description).
    pub y_desc: String,
    pub categories: Vec<String>,
    /// (name, one value per category).
    pub series: Vec<(String, Vec<f64>)>,
    pub stacked: bool,
    /// (low, high) per category, drawn over the first series' bars.
    pub intervals: Option<Vec<(f64, f64)>>,
    /// A reference line across the categories: label and value.
    pub reference: Option<(String, f64)>,
    /// Fixed end of the value axis (e.g. 1 for shares).
    pub y_max: Option<f64>,
}

impl Bars {
    /// Bars without intervals, reference or fixed axis end.
    pub fn new(title: &str, y_desc: &str, categories: Vec<String>, series: Vec<(String, Vec<f64>)>) -> Self {
        Self {
            title: title.to_string(),
            y_desc: y_desc.to_string(),
            categories,
            series,
            stacked: false,
            intervals: None,
            reference: None,
            y_max: None,
        }
    }

    /// The same bars stacked.
    pub fn stacked(self) -> Self {
        Self { stacked: true, ..self }
    }

    /// The same bars on a value axis that ends at 1 (shares).
    pub fn shares(self) -> Self {
        Self { y_max: Some(1.0), ..self }
    }
}

/// A line chart of (x, y) series with markers, and vertical reference lines.
pub(super) struct Lines {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// (name, points in x order).
    pub series: Vec<(String, Vec<(f64, f64)>)>,
    /// (label, x) of each vertical line.
    pub vlines: Vec<(String, f64)>,
    /// Fixed top of the y axis (e.g. 1 for shares).
    pub y_max: Option<f64>,
}

/// A straight line from `points` with a legend entry `name`.
fn labelled_line<CT: CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, CT>,
    points: Vec<(f64, f64)>,
    name: &str,
    color: RGBColor,
) -> Result<()> {
    chart
        .draw_series(LineSeries::new(points, color.stroke_width(2)))
        .map_err(plot_err)?
        .label(name)
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], color.stroke_width(2)));
    Ok(())
}

/// The legend box at `position`.
fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> Result<()> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)
}

/// Draws `b` as horizontal bars: categories down the y axis, first at the top, their labels
/// horizontal and readable however many there are; values along x. Returns the SVG text.
pub(super) fn draw_bars(b: &Bars) -> Result<String> {
    let n = b.categories.len();
    let groups = if b.stacked { 1 } else { b.series.len().max(1) };
    let height = (110 + n * (12 * groups + 10)).clamp(240, 2400) as u32;
    let longest = b.categories.iter().map(|c| c.chars().count()).max().unwrap_or(1);
    let y_area = (longest * 7 + 16).clamp(40, 300) as u32;
    let top = if b.stacked {
        (0..n).map(|i| b.series.iter().map(|(_, v)| v[i].max(0.0)).sum::<f64>()).fold(0.0, f64::max)
    } else {
        b.series.iter().flat_map(|(_, v)| v.iter().copied()).fold(0.0, f64::max)
    };
    let top = [
        top,
        b.intervals.iter().flatten().map(|iv| iv.1).fold(0.0, f64::max),
        b.reference.as_ref().map_or(0.0, |r| r.1),
    ]
    .into_iter()
    .fold(0.0, f64::max);
    // room on the right for the legend
    let x_max = b.y_max.unwrap_or(if top > 0.0 { top } else { 1.0 }) * 1.4;
    let at = |i: usize| (n - 1 - i) as f64; // category i's centre on the y axis
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (860, height)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&b.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(y_area)
            .build_cartesian_2d(0f64..x_max, CategoryAxis { n })
            .map_err(plot_err)?;
        let cats = b.categories.clone();
        let label = move |v: &f64| {
            let i = v.round();
            if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < cats.len() {
                cats[cats.len() - 1 - i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n)
            .y_label_formatter(&label)
            .y_label_style(("sans-serif", 11))
            .x_desc(b.y_desc.as_str())
            .draw()
            .map_err(plot_err)?;
        let thick = 0.8 / groups as f64;
        let mut lefts = vec![0.0f64; n];
        for (s, (name, values)) in b.series.iter().enumerate() {
            let color = color(s);
            let rects: Vec<_> = values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let (x0, y0) =
                        if b.stacked { (lefts[i], at(i) + 0.4) } else { (0.0, at(i) + 0.4 - s as f64 * thick) };
                    let y1 = y0 - if b.stacked { 0.8 } else { thick };
                    Rectangle::new([(x0, y0), (x0 + v.max(0.0), y1)], color.filled())
                })
                .collect();
            if b.stacked {
                for (i, v) in values.iter().enumerate() {
                    lefts[i] += v.max(0.0);
                }
            }
            chart
                .draw_series(rects)
                .map_err(plot_err)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
        }
        if let Some(intervals) = &b.intervals {
            let mid = |i: usize| if b.stacked { at(i) } else { at(i) + 0.4 - thick / 2.0 };
            chart
                .draw_series(intervals.iter().enumerate().map(|(i, (lo, hi))| {
                    ErrorBar::new_horizontal(mid(i), *lo, (lo + hi) / 2.0, *hi, BLACK.stroke_width(2), 8)
                }))
                .map_err(plot_err)?
                .label("Wilson 95% interval")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 12, y)], BLACK.stroke_width(2)));
        }
        if let Some((name, x)) = &b.reference {
            labelled_line(&mut chart, vec![(*x, -0.5), (*x, n as f64 - 0.5)], name, RGBColor(200, 0, 0))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

/// The category axis of a bar chart: categories at 0, 1, …, n-1 on the range -0.5..n-0.5, every
/// category a key point (so each gets its label), fewer when plotters asks for fewer.
struct CategoryAxis {
    n: usize,
}

impl plotters::coord::ranged1d::Ranged for CategoryAxis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.n.max(1) as f64;
        let t = (value + 0.5) / span;
        limit.0 + ((limit.1 - limit.0) as f64 * t).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        let most = hint.max_num_points().max(1);
        let step = self.n.div_ceil(most).max(1);
        (0..self.n).step_by(step).map(|i| i as f64).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        -0.5..(self.n as f64 - 0.5)
    }
}

/// Draws `l`: each series as a line with a marker per point, then the vertical lines.
/// Returns the SVG text.
pub(super) fn draw_lines(l: &Lines) -> Result<String> {
    let xs = l.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)).chain(l.vlines.iter().map(|v| v.1));
    let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
    let (x_min, x_max) = if x_min < x_max { (x_min, x_max) } else { (x_min - 1.0, x_min + 1.0) };
    let pad = (x_max - x_min) * 0.04;
    let top = l.series.iter().flat_map(|(_, p)| p.iter().map(|p| p.1)).fold(0.0, f64::max);
    let y_max = l.y_max.unwrap_or(if top > 0.0 { top * 1.15 } else { 1.0 });
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (720, 380)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(&l.title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(72)
            .build_cartesian_2d((x_min - pad)..(x_max + pad), 0f64..y_max)
            .map_err(plot_err)?;
        chart.configure_mesh().x_desc(l.x_desc.as_str()).y_desc(l.y_desc.as_str()).draw().map_err(plot_err)?;
        for (s, (name, points)) in l.series.iter().enumerate() {
            labelled_line(&mut chart, points.clone(), name, color(s))?;
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color(s).filled()))).map_err(plot_err)?;
        }
        for (v, (name, x)) in l.vlines.iter().enumerate() {
            labelled_line(&mut chart, vec![(*x, 0.0), (*x, y_max)], name, color(l.series.len() + v))?;
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(plot_err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_draw_marks_without_system_fonts() {
        let mut b = Bars::new("t <&>", "n", vec!["a".into(), "b".into()], vec![("s".into(), vec![1.0, 2.0])]);
        b.intervals = Some(vec![(0.5, 1.5), (1.0, 3.0)]);
        b.reference = Some(("ref".into(), 1.5));
        let svg = draw_bars(&b).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("t &lt;&amp;&gt;"));
        // background + 2 bars + legend swatch
        assert!(svg.matches("<rect").count() >= 4, "{svg}");
        assert!(svg.contains("\nref\n") && svg.contains("Wilson 95% interval"), "{svg}");
    }

    #[test]
    fn lines_draw_a_marker_per_point_and_the_vertical_lines() {
        let svg = draw_lines(&Lines {
            title: "l".into(),
            x_desc: "x".into(),
            y_desc: "y".into(),
            series: vec![("s".into(), vec![(1.0, 0.5), (2.0, 0.25), (4.0, 0.0)])],
            vlines: vec![("P50".into(), 3.0)],
            y_max: Some(1.0),
        })
        .unwrap();
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert!(svg.contains("\nP50\n"), "{svg}");
    }
}
