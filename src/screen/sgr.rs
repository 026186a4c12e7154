//! SGR (`CSI ... m`) as tmux 3.3 applies it to the pen (`input.c`,
//! `input_csi_dispatch_sgr`): each attribute its own bit, `22` clearing
//! bold and dim together, `21` a double underline, colon forms for
//! underline styles and colours, malformed colours ignored.

use super::cell::{Attrs, Color, Pen, Underline};

/// Applies one SGR's parameters; each is a slice of colon-separated parts
/// (one part when the parameter had no colon).
pub fn apply(pen: &mut Pen, params: &[&[u16]]) {
    if params.is_empty() {
        *pen = Pen::default();
        return;
    }
    let mut i = 0;
    while i < params.len() {
        let param = params[i];
        if param.len() > 1 {
            apply_colon(pen, param);
            i += 1;
            continue;
        }
        let n = param.first().copied().unwrap_or(0);
        if matches!(n, 38 | 48 | 58) {
            i += 1;
            match single(params, i) {
                Some(2) => {
                    let part = |k| single(params, i + k).filter(|v| *v <= 255);
                    if let (Some(r), Some(g), Some(b)) = (part(1), part(2), part(3)) {
                        set_color(pen, n, Color::Rgb(r as u8, g as u8, b as u8));
                        i += 3;
                    }
                }
                Some(5) => {
                    set_indexed(pen, n, single(params, i + 1));
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        apply_number(pen, n);
        i += 1;
    }
}

/// Parameter `i` when it is a plain number (no colon).
fn single(params: &[&[u16]], i: usize) -> Option<u16> {
    match params.get(i) {
        Some([n]) => Some(*n),
        _ => None,
    }
}

fn apply_number(pen: &mut Pen, n: u16) {
    let attrs = &mut pen.attrs;
    match n {
        0 => *pen = Pen::default(),
        1 => attrs.insert(Attrs::BOLD),
        2 => attrs.insert(Attrs::DIM),
        3 => attrs.insert(Attrs::ITALIC),
        4 => pen.underline = Underline::Single,
        5 | 6 => attrs.insert(Attrs::BLINK),
        7 => attrs.insert(Attrs::REVERSE),
        8 => attrs.insert(Attrs::HIDDEN),
        9 => attrs.insert(Attrs::STRIKETHROUGH),
        21 => pen.underline = Underline::Double,
        22 => {
            attrs.remove(Attrs::BOLD);
            attrs.remove(Attrs::DIM);
        }
        23 => attrs.remove(Attrs::ITALIC),
        24 => pen.underline = Underline::None,
        25 => attrs.remove(Attrs::BLINK),
        27 => attrs.remove(Attrs::REVERSE),
        28 => attrs.remove(Attrs::HIDDEN),
        29 => attrs.remove(Attrs::STRIKETHROUGH),
        30..=37 => pen.fg = Color::Idx((n - 30) as u8),
        39 => pen.fg = Color::Default,
        40..=47 => pen.bg = Color::Idx((n - 40) as u8),
        49 => pen.bg = Color::Default,
        53 => attrs.insert(Attrs::OVERLINE),
        55 => attrs.remove(Attrs::OVERLINE),
        59 => pen.us = Color::Default,
        90..=97 => pen.fg = Color::Idx((n - 90 + 8) as u8),
        100..=107 => pen.bg = Color::Idx((n - 100 + 8) as u8),
        _ => {}
    }
}

/// `38;5;n`: a colour outside 0..=255 (or none) resets fg/bg, as tmux does.
fn set_indexed(pen: &mut Pen, which: u16, n: Option<u16>) {
    match n.filter(|n| *n <= 255) {
        Some(n) => set_color(pen, which, Color::Idx(n as u8)),
        None if which == 58 => {}
        None => set_color(pen, which, Color::Default),
    }
}

fn set_color(pen: &mut Pen, which: u16, color: Color) {
    match which {
        38 => pen.fg = color,
        48 => pen.bg = color,
        _ => pen.us = color,
    }
}

/// A parameter with colons: `4:n` (underline style) or `38:5:n`,
/// `38:2:r:g:b`, `38:2::r:g:b` (and 48, 58). tmux takes at most seven parts.
fn apply_colon(pen: &mut Pen, parts: &[u16]) {
    if parts.len() >= 8 {
        return;
    }
    match parts {
        [4, style] => {
            pen.underline = match style {
                0 => Underline::None,
                1 => Underline::Single,
                2 => Underline::Double,
                3 => Underline::Curly,
                4 => Underline::Dotted,
                5 => Underline::Dashed,
                _ => pen.underline,
            }
        }
        [which @ (38 | 48 | 58), 2, rest @ ..] if parts.len() >= 3 => {
            let at = if parts.len() == 5 { 0 } else { 1 };
            if let [r, g, b] = rest.get(at..at + 3).unwrap_or(&[])
                && *r <= 255
                && *g <= 255
                && *b <= 255
            {
                set_color(pen, *which, Color::Rgb(*r as u8, *g as u8, *b as u8));
            }
        }
        [which @ (38 | 48 | 58), 5, n, ..] => set_indexed(pen, *which, Some(*n)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pen_after(sgr: &str) -> Pen {
        let params: Vec<Vec<u16>> = sgr
            .split(';')
            .filter(|p| !sgr.is_empty() || !p.is_empty())
            .map(|p| p.split(':').map(|n| n.parse().unwrap_or(0)).collect())
            .collect();
        let slices: Vec<&[u16]> = params.iter().map(Vec::as_slice).collect();
        let mut pen = Pen::default();
        apply(&mut pen, &slices);
        pen
    }

    fn attrs(list: &[Attrs]) -> Attrs {
        let mut all = Attrs::default();
        for a in list {
            all.insert(*a);
        }
        all
    }

    #[test]
    fn sgr_as_tmux_keeps_it() {
        let plain = Pen::default();
        for (sgr, want) in [
            ("", plain),
            (
                "1;2",
                Pen {
                    attrs: attrs(&[Attrs::BOLD, Attrs::DIM]),
                    ..plain
                },
            ),
            ("1;2;22", plain),
            (
                "9;53;5;8;3;7",
                Pen {
                    attrs: attrs(&[
                        Attrs::STRIKETHROUGH,
                        Attrs::OVERLINE,
                        Attrs::BLINK,
                        Attrs::HIDDEN,
                        Attrs::ITALIC,
                        Attrs::REVERSE,
                    ]),
                    ..plain
                },
            ),
            ("9;29", plain),
            (
                "21",
                Pen {
                    underline: Underline::Double,
                    ..plain
                },
            ),
            (
                "4:3",
                Pen {
                    underline: Underline::Curly,
                    ..plain
                },
            ),
            ("4:3;24", plain),
            ("4;4:0", plain),
            (
                "31;42",
                Pen {
                    fg: Color::Idx(1),
                    bg: Color::Idx(2),
                    ..plain
                },
            ),
            (
                "91;101",
                Pen {
                    fg: Color::Idx(9),
                    bg: Color::Idx(9),
                    ..plain
                },
            ),
            (
                "38;5;208",
                Pen {
                    fg: Color::Idx(208),
                    ..plain
                },
            ),
            (
                "38:5:208",
                Pen {
                    fg: Color::Idx(208),
                    ..plain
                },
            ),
            (
                "48;2;1;2;3",
                Pen {
                    bg: Color::Rgb(1, 2, 3),
                    ..plain
                },
            ),
            (
                "48:2::1:2:3",
                Pen {
                    bg: Color::Rgb(1, 2, 3),
                    ..plain
                },
            ),
            (
                "48:2:1:2:3",
                Pen {
                    bg: Color::Rgb(1, 2, 3),
                    ..plain
                },
            ),
            (
                "58:5:1",
                Pen {
                    us: Color::Idx(1),
                    ..plain
                },
            ),
            ("58:2::9:8:7;59", plain),
            ("31;38;5;300", plain),
            (
                "38;2;1;2;999;1",
                Pen {
                    attrs: attrs(&[Attrs::BOLD, Attrs::DIM]),
                    ..plain
                },
            ),
            ("1:2", plain),
        ] {
            assert_eq!(pen_after(sgr), want, "SGR {sgr:?}");
        }
    }
}
