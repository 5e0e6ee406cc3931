//! The activity chart: questions per bucket (hour, day or week) as stacked bars,
//! searches under chats, with abstained chats as a line over them; its y scale,
//! thinned-out axis labels, tooltips, the text a screen reader hears, and the same
//! numbers as a table.

use search_service::insights::report::{Bucket, Report};
use serde::Serialize;

use super::dates::Stamp;
use super::format::{compact, count, plural, r2};

/// A rectangle of a chart.
#[derive(Debug, Clone, Serialize)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Tick {
    y: f64,
    label: String,
}

#[derive(Debug, Clone, Serialize)]
struct Slot {
    /// The whole column (hover target, tooltip).
    hit: Rect,
    tip: String,
    searches: Option<Rect>,
    chats: Option<Rect>,
}

#[derive(Debug, Clone, Serialize)]
struct XLabel {
    x: f64,
    line1: String,
    line2: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Debug, Clone, Serialize)]
struct Overlay {
    /// `x,y x,y …` for a `<polyline>`.
    points: String,
    markers: Vec<Point>,
    r: f64,
}

#[derive(Debug, Clone, Serialize)]
struct SeriesRow {
    when: String,
    searches: String,
    chats: String,
    abstained: String,
    degraded: String,
}

/// Questions over time: stacked bars (searches, chats), abstained chats as a line.
#[derive(Debug, Clone, Serialize)]
pub(super) struct ActivityChart {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    grid: Vec<Tick>,
    slots: Vec<Slot>,
    labels: Vec<XLabel>,
    label_y1: f64,
    label_y2: f64,
    abstained: Option<Overlay>,
    aria: String,
    rows: Vec<SeriesRow>,
}

/// A step of 1, 2, 2.5 or 5 × 10ⁿ (whole numbers) that divides `max` into at most
/// four intervals, and the axis top (at least two intervals).
fn y_scale(max: u64) -> (u64, u64) {
    let max = max.max(1);
    let mut magnitude = 1u64;
    loop {
        for m in [10, 20, 25, 50] {
            let step = magnitude * m / 10;
            if step == 0 || (m == 25 && magnitude < 10) {
                continue;
            }
            let n = max.div_ceil(step);
            if n <= 4 {
                return (step, n.max(2) * step);
            }
        }
        magnitude = magnitude.saturating_mul(10);
    }
}

/// Every how many buckets an axis label goes, about ten labels in all.
fn label_step(n: usize, bucket: &str) -> usize {
    let raw = n.div_ceil(10).max(1);
    let nice: &[usize] = match bucket {
        "hour" => &[1, 2, 3, 4, 6, 8, 12, 24, 48, 72, 168],
        "day" => &[1, 2, 3, 7, 14, 28, 56, 91],
        "week" => &[1, 2, 4, 8, 13, 26, 52, 104],
        _ => &[],
    };
    nice.iter().copied().find(|&s| s >= raw).unwrap_or(raw)
}

/// The bucket, for a tooltip: `Tue 1 Dec 2026, 14:00–15:00 UTC`, `Tue 1 Dec 2026`,
/// `Week of 1 Dec 2026`.
fn bucket_name(b: &Bucket, bucket: &str) -> String {
    match Stamp::parse(&b.start) {
        Some(t) => match bucket {
            "hour" => {
                format!("{} {}, {}–{:02}:00 {}", t.weekday(), t.date(), t.clock(), (t.hour() + 1) % 24, t.zone())
            }
            "week" => format!("Week of {}", t.date()),
            _ => format!("{} {}", t.weekday(), t.date()),
        },
        None => b.start.clone(),
    }
}

/// The chart of a report's series; `None` when no bucket holds a question.
pub(super) fn chart(r: &Report) -> Option<ActivityChart> {
    let series = &r.series;
    let max = series.iter().map(|b| b.searches + b.chats).max().unwrap_or(0);
    if max == 0 {
        return None;
    }
    let bucket = r.period.bucket.as_str();
    let f = Frame::new(series.len(), max);
    let grid = (0..=f.y_top / f.step).map(|i| Tick { y: f.y(i * f.step), label: compact(i * f.step) }).collect();
    let rows = series
        .iter()
        .map(|b| SeriesRow {
            when: bucket_name(b, bucket),
            searches: count(b.searches),
            chats: count(b.chats),
            abstained: count(b.abstained),
            degraded: count(b.degraded),
        })
        .collect();
    Some(ActivityChart {
        width: 1000.0,
        height: 280.0,
        left: f.left,
        right: f.right,
        top: f.top,
        bottom: f.bottom,
        grid,
        slots: activity_slots(&f, series, bucket),
        labels: x_labels(&f, series, bucket),
        label_y1: f.bottom + 20.0,
        label_y2: f.bottom + 38.0,
        abstained: abstained_overlay(&f, series),
        aria: activity_aria(r, bucket),
        rows,
    })
}

/// The activity chart's geometry: the plot area in a 1000 × 280 view box, one
/// slot per bucket, and the y scale up to a round `y_top` in steps of `step`.
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    slot_w: f64,
    bar_w: f64,
    step: u64,
    y_top: u64,
}

impl Frame {
    fn new(n: usize, max: u64) -> Frame {
        let (left, right, top, bottom) = (56.0, 976.0, 16.0, 228.0);
        let (step, y_top) = y_scale(max);
        let slot_w = (right - left) / n as f64;
        Frame { left, right, top, bottom, slot_w, bar_w: (slot_w * 0.72).min(56.0), step, y_top }
    }

    /// The height of value `v`.
    fn y(&self, v: u64) -> f64 {
        r2(self.bottom - v as f64 / self.y_top as f64 * (self.bottom - self.top))
    }

    /// The middle of slot `i`.
    fn center(&self, i: usize) -> f64 {
        self.left + self.slot_w * (i as f64 + 0.5)
    }

    /// The bar of slot `i` from value `from` up to `to` (none when empty).
    fn bar(&self, i: usize, from: u64, to: u64) -> Option<Rect> {
        (to > from).then(|| Rect {
            x: r2(self.center(i) - self.bar_w / 2.0),
            y: self.y(to),
            w: r2(self.bar_w),
            h: r2(self.y(from) - self.y(to)),
        })
    }
}

/// Each bucket's stacked bars (searches, then chats) and its hover target.
fn activity_slots(f: &Frame, series: &[Bucket], bucket: &str) -> Vec<Slot> {
    series
        .iter()
        .enumerate()
        .map(|(i, b)| Slot {
            hit: Rect { x: r2(f.left + f.slot_w * i as f64), y: f.top, w: r2(f.slot_w), h: f.bottom - f.top },
            tip: format!(
                "{}: {} ({}, {}; {} abstained, {} by the fallback)",
                bucket_name(b, bucket),
                plural(b.searches + b.chats, "question", "questions"),
                plural(b.searches, "search", "searches"),
                plural(b.chats, "chat", "chats"),
                count(b.abstained),
                count(b.degraded),
            ),
            searches: f.bar(i, 0, b.searches),
            chats: f.bar(i, b.searches, b.searches + b.chats),
        })
        .collect()
}

/// Axis labels, thinned out; the second line when the day (hourly) or the year changes.
fn x_labels(f: &Frame, series: &[Bucket], bucket: &str) -> Vec<XLabel> {
    let every = label_step(series.len(), bucket);
    let aligned_hours = bucket == "hour" && 24usize.is_multiple_of(every);
    let mut labels = Vec::new();
    let mut previous: Option<Stamp> = None;
    for (i, b) in series.iter().enumerate() {
        let stamp = Stamp::parse(&b.start);
        let shown = match stamp {
            Some(t) if aligned_hours => usize::from(t.hour()).is_multiple_of(every),
            _ => i.is_multiple_of(every),
        };
        if !shown {
            continue;
        }
        let (line1, line2) = match stamp {
            Some(t) if bucket == "hour" => {
                let new_day = previous.is_none_or(|p| p.day() != t.day());
                (t.clock(), new_day.then(|| t.day_month()))
            }
            Some(t) => (t.day_month(), previous.is_none_or(|p| p.year() != t.year()).then(|| t.year().to_string())),
            None => (b.start.clone(), None),
        };
        previous = stamp.or(previous);
        labels.push(XLabel { x: r2(f.center(i)), line1, line2 });
    }
    labels
}

/// The abstentions as a line over the bars (markers while they stay legible).
fn abstained_overlay(f: &Frame, series: &[Bucket]) -> Option<Overlay> {
    let n = series.len();
    series.iter().any(|b| b.abstained > 0).then(|| {
        let pts: Vec<Point> =
            series.iter().enumerate().map(|(i, b)| Point { x: r2(f.center(i)), y: f.y(b.abstained) }).collect();
        Overlay {
            points: pts.iter().map(|p| format!("{},{}", p.x, p.y)).collect::<Vec<_>>().join(" "),
            r: if n <= 31 { 3.5 } else { 2.5 },
            markers: if n <= 60 { pts } else { Vec::new() },
        }
    })
}

/// What a screen reader says of the chart: the totals and the busiest bucket.
fn activity_aria(r: &Report, bucket: &str) -> String {
    let (t, series) = (&r.totals, &r.series);
    let busiest = series.iter().max_by_key(|b| (b.searches + b.chats, std::cmp::Reverse(b.start.clone())));
    format!(
        "Questions per {bucket}, {} bars: {}, {}, {} abstained.{}",
        series.len(),
        plural(t.searches, "search", "searches"),
        plural(t.chats, "chat", "chats"),
        count(t.abstained),
        busiest
            .map(|b| format!(
                " Busiest: {}, {}.",
                bucket_name(b, bucket),
                plural(b.searches + b.chats, "question", "questions")
            ))
            .unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insights_html::render;
    use crate::insights_html::tests::{sample, section};

    #[test]
    fn scales_are_round() {
        for max in [1, 2, 3, 4, 5, 7, 9, 10, 17, 28, 99, 100, 101, 1234, 99_999] {
            let (step, top) = y_scale(max);
            assert!(top >= max && (2..=4).contains(&(top / step)), "{max}: {step} {top}");
        }
    }

    #[test]
    fn charts_take_one_bucket_and_hundreds() {
        let mut r = sample();
        r.series.truncate(1);
        let html = render(&r);
        let activity = section(&html, "activity");
        assert_eq!(activity.matches("<rect class=\"bar bar--search\"").count(), 1);
        assert!(activity.contains("width=\"56.0\""), "one bar is not the chart's width");

        r.period.bucket = "hour".into();
        r.series = (0..100)
            .map(|h| Bucket {
                start: search_service::service::rfc3339(1_796_083_200 + h * 3600),
                searches: h % 7,
                chats: h % 3,
                abstained: u64::from(h % 5 == 0),
                degraded: 0,
            })
            .collect();
        let html = render(&r);
        let activity = section(&html, "activity");
        assert_eq!(activity.matches("class=\"slot\"").count(), 100);
        let labels = activity.matches("class=\"x-label\"").count();
        assert!((5..=13).contains(&labels), "{labels} labels");
        assert!(activity.contains(">00:00<") && activity.contains(">12:00<"), "hourly labels on round hours");
        assert!(!activity.contains("<circle class=\"marker"), "no markers on 100 bars");
    }
}
