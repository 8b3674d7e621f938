//! The chart (SVG): one group of horizontal bars per figure, ours beside CUDA by hand and clang
//! OpenMP, each divided by the anchor's figure so that 1.0 is the anchor and shorter is better;
//! a red tick marks where the target lies. Figures span microseconds to seconds, so absolute
//! bars on one axis would hide the small ones: normalised bars keep every figure readable and
//! the absolute value is written at the end of each bar.

use std::path::Path;

use anyhow::{Result, anyhow};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::report::{Row, Source, number};

/// Bar colours: ours blue, CUDA green, clang orange.
const SOURCES: [(Source, RGBColor); 3] = [
    (Source::Ours, RGBColor(31, 119, 180)),
    (Source::Cuda, RGBColor(118, 185, 0)),
    (Source::Clang, RGBColor(255, 127, 14)),
];
const TARGET: RGBColor = RGBColor(214, 39, 40);
const GREY: RGBColor = RGBColor(100, 100, 100);
const WIDTH: u32 = 1200;
/// Height of one figure's group of bars, in pixels.
const GROUP_HEIGHT: u32 = 58;
const FONT: &str = "sans-serif";
const LEGEND_HEIGHT: u32 = 34;

/// A row with the anchor figure its bars are divided by.
struct Group<'a> {
    row: &'a Row,
    reference: Source,
    reference_value: f64,
}

impl Group<'_> {
    fn relative(&self, source: Source) -> Option<f64> {
        Some(self.row.value(source)? / self.reference_value)
    }

    /// Where the target lies, relative to the reference.
    fn target(&self) -> Option<f64> {
        Some(
            self.row.target_factor * self.row.value(self.row.target_anchor)? / self.reference_value,
        )
    }
}

/// Writes the chart of `rows` to `path`. Rows without an anchor figure (nothing to divide by)
/// are left out; the table still has them.
pub(crate) fn write_svg(path: &Path, rows: &[Row], title: &str) -> Result<()> {
    let groups: Vec<Group<'_>> = rows
        .iter()
        .filter_map(|row| {
            let (reference, reference_value) = [Source::Cuda, Source::Clang]
                .into_iter()
                .find_map(|s| Some((s, row.value(s).filter(|v| *v > 0.0)?)))?;
            Some(Group { row, reference, reference_value })
        })
        .collect();
    let height = 180 + GROUP_HEIGHT * groups.len().max(1) as u32;
    let area = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    area.fill(&WHITE).map_err(draw_error)?;
    if groups.is_empty() {
        let area = area.titled(title, (FONT, 20)).map_err(draw_error)?;
        area.draw(&Text::new(
            "no anchor was measured: nothing to compare with (see results.md)",
            (40, 60),
            (FONT, 16),
        ))
        .map_err(draw_error)?;
        return area.present().map_err(draw_error);
    }

    let widest = groups
        .iter()
        .flat_map(|g| SOURCES.iter().filter_map(|(s, _)| g.relative(*s)).chain(g.target()))
        .fold(1.0, f64::max);
    let count = groups.len() as f64;
    let titled = area.titled(title, (FONT, 20)).map_err(draw_error)?;
    let (legend, plot) = titled.split_vertically(LEGEND_HEIGHT);
    draw_legend(&legend)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(250)
        .build_cartesian_2d(0f64..(widest * 1.3).max(2.2), 0f64..count)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| format!("{x:.1}x"))
        .x_desc("time relative to the anchor (CUDA by hand, or clang OpenMP where marked): shorter is better")
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(draw_error)?;
    let anchor_line =
        PathElement::new(vec![(1.0, 0.0), (1.0, count)], BLACK.mix(0.4).stroke_width(1));
    chart.draw_series(std::iter::once(anchor_line)).map_err(draw_error)?;

    // Group i takes the band [count - i - 1, count - i], the first at the top.
    let top = |i: usize| count - i as f64;
    let bar = |i: usize, slot: usize| {
        let upper = top(i) - 0.1 - slot as f64 * 0.27;
        (upper - 0.24, upper)
    };
    for (slot, (source, color)) in SOURCES.iter().enumerate() {
        let bars = groups.iter().enumerate().filter_map(|(i, g)| {
            let (lower, upper) = bar(i, slot);
            Some(Rectangle::new([(0.0, lower), (g.relative(*source)?, upper)], color.filled()))
        });
        chart.draw_series(bars).map_err(draw_error)?;
        // The value past the bar's end, and past the target tick where that is further.
        let values = groups.iter().enumerate().filter_map(|(i, g)| {
            let (lower, upper) = bar(i, slot);
            let text = format!("{} {}", number(g.row.value(*source)?), g.row.unit);
            let end = g.relative(*source)?.max(g.target().unwrap_or(0.0));
            let style = TextStyle::from((FONT, 12)).pos(Pos::new(HPos::Left, VPos::Center));
            Some(Text::new(text, (end + 0.015 * widest, (lower + upper) / 2.0), style))
        });
        chart.draw_series(values).map_err(draw_error)?;
    }
    let ticks = groups.iter().enumerate().filter_map(|(i, g)| {
        let at = g.target()?;
        Some(PathElement::new(
            vec![(at, top(i) - 0.04), (at, top(i) - 0.96)],
            TARGET.stroke_width(3),
        ))
    });
    chart.draw_series(ticks).map_err(draw_error)?;

    // Figure names left of their group, with the mode and the reference underneath (in pixels of
    // the whole picture, which `backend_coord` gives).
    for (i, group) in groups.iter().enumerate() {
        let (x, y) = chart.backend_coord(&(0.0, top(i) - 0.5));
        let name = TextStyle::from((FONT, 14)).pos(Pos::new(HPos::Right, VPos::Center));
        let detail =
            TextStyle::from((FONT, 12)).color(&GREY).pos(Pos::new(HPos::Right, VPos::Center));
        let mut below = group.row.mode.clone();
        if group.reference != Source::Cuda {
            below += &format!(", 1.0 = {}", group.reference.title());
        }
        area.draw(&Text::new(group.row.figure.clone(), (x - 10, y - 8), name))
            .map_err(draw_error)?;
        area.draw(&Text::new(below, (x - 10, y + 9), detail)).map_err(draw_error)?;
    }
    area.present().map_err(draw_error)
}

/// One row under the title: a swatch and a name for each program, then the target tick.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, plotters::coord::Shift>) -> Result<()> {
    let style = TextStyle::from((FONT, 14)).pos(Pos::new(HPos::Left, VPos::Center));
    let y = LEGEND_HEIGHT as i32 / 2;
    let mut x = 280;
    for (source, color) in SOURCES {
        area.draw(&Rectangle::new([(x, y - 7), (x + 16, y + 7)], color.filled()))
            .map_err(draw_error)?;
        area.draw(&Text::new(source.title(), (x + 22, y), style.clone())).map_err(draw_error)?;
        x += 150;
    }
    area.draw(&PathElement::new(vec![(x + 8, y - 9), (x + 8, y + 9)], TARGET.stroke_width(3)))
        .map_err(draw_error)?;
    area.draw(&Text::new("target", (x + 22, y), style)).map_err(draw_error)?;
    Ok(())
}

/// plotters' errors borrow nothing but are generic over the backend: flatten them to text.
fn draw_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing the chart: {e}")
}

#[cfg(test)]
mod tests {
    use super::super::report::{Mode, Series, rows};
    use super::*;

    #[test]
    fn svg_is_written() {
        let mode = Mode { n: 64 << 20, k: 50, launches: 1000, pairs: 10000 };
        let mut all = Vec::new();
        for (source, figures) in [
            (
                Source::Ours,
                [
                    ("pinned.preloaded_total_ms", 27.0),
                    ("any.preload_pair_us", 1.5),
                    ("any.empty_launch_us", 25.0),
                ],
            ),
            (
                Source::Cuda,
                [
                    ("pinned.preloaded_total_ms", 26.3),
                    ("any.preload_pair_us", f64::NAN),
                    ("any.empty_launch_us", 8.8),
                ],
            ),
            (
                Source::Clang,
                [
                    ("pinned.preloaded_total_ms", 50.3),
                    ("any.mapper_pair_us", 1.3),
                    ("any.empty_launch_us", 30.0),
                ],
            ),
        ] {
            let mut series = Series::new(source, mode);
            series.add(
                &figures
                    .iter()
                    .filter(|(_, v)| !v.is_nan())
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
            );
            series.finish();
            all.push(series);
        }
        let rows = rows(&[mode], &all);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chart.svg");
        write_svg(&path, &rows, "saxpy & co").unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("saxpy &amp; co"));
        for text in [
            "preloaded total, pinned",
            "preload pair, data present",
            "N=64M, 1.0 = clang OpenMP",
            "27.00 ms",
            "8.800 us",
            "CUDA by hand",
            "target",
        ] {
            assert!(svg.contains(text), "no `{text}` in the chart");
        }
        // The background, three legend swatches, and a bar for each figure measured (eight),
        // the anchors' preloaded totals twice (beside ours with synchronous and with
        // asynchronous launches, which the ours of this test did not measure).
        assert_eq!(svg.matches("<rect").count(), 1 + 3 + 8 + 2, "{svg}");

        write_svg(&path, &[], "nothing").unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("no anchor was measured"));
    }
}
