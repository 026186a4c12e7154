//! Normalizes SGR-coloured lines into runs of (attributes, text), so tmux's
//! `capture-pane -e` and tmuxd's `?format=ansi` compare by what a reader
//! sees, not by how each program spells its escape sequences.

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Color {
    #[default]
    Default,
    Idx(u8),
    Rgb(u8, u8, u8),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attrs {
    pub fg: Color,
    pub bg: Color,
    pub bold: bool,
    pub dim: bool,
    pub strike: bool,
    pub italic: bool,
    pub underline: bool,
    pub inverse: bool,
}

impl Attrs {
    /// What a blank cell shows: only what paints its background.
    fn for_blank(self) -> Attrs {
        Attrs {
            bg: self.bg,
            underline: self.underline,
            inverse: self.inverse,
            fg: if self.inverse {
                self.fg
            } else {
                Color::Default
            },
            ..Attrs::default()
        }
    }

    fn apply_sgr(&mut self, params: &str) {
        let params: Vec<Vec<u16>> = params
            .split(';')
            .map(|p| p.split(':').map(|n| n.parse().unwrap_or(0)).collect())
            .collect();
        let mut i = 0;
        while i < params.len() {
            let param = &params[i];
            match param[0] {
                0 => *self = Attrs::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                // `4:0` is "no underline"; other styles are underlines.
                4 => self.underline = param.get(1) != Some(&0),
                7 => self.inverse = true,
                9 => self.strike = true,
                29 => self.strike = false,
                21 | 22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                27 => self.inverse = false,
                n @ 30..=37 => self.fg = Color::Idx((n - 30) as u8),
                n @ 40..=47 => self.bg = Color::Idx((n - 40) as u8),
                n @ 90..=97 => self.fg = Color::Idx((n - 90 + 8) as u8),
                n @ 100..=107 => self.bg = Color::Idx((n - 100 + 8) as u8),
                39 => self.fg = Color::Default,
                49 => self.bg = Color::Default,
                n @ (38 | 48 | 58) => {
                    let color = if param.len() > 1 {
                        extended_color(&param[1..], true)
                    } else {
                        // `38;5;n` and `38;2;r;g;b`: the rest follow as parameters.
                        let rest: Vec<u16> = params[i + 1..].iter().map(|p| p[0]).collect();
                        let (color, used) = extended_color_len(&rest);
                        i += used;
                        color
                    };
                    match n {
                        38 => self.fg = color,
                        48 => self.bg = color,
                        _ => {}
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// `5:n`, `2:r:g:b` or `2::r:g:b` (with a colour-space id) as sub-parameters.
fn extended_color(sub: &[u16], colon: bool) -> Color {
    match sub {
        [5, n, ..] => Color::Idx(*n as u8),
        [2, _, r, g, b, ..] if colon => Color::Rgb(*r as u8, *g as u8, *b as u8),
        [2, r, g, b] => Color::Rgb(*r as u8, *g as u8, *b as u8),
        _ => Color::Default,
    }
}

/// `5;n` or `2;r;g;b` as separate parameters: the colour and how many it used.
fn extended_color_len(rest: &[u16]) -> (Color, usize) {
    match rest {
        [5, n, ..] => (Color::Idx(*n as u8), 2),
        [2, r, g, b, ..] => (Color::Rgb(*r as u8, *g as u8, *b as u8), 4),
        _ => (Color::Default, rest.len()),
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub attrs: Attrs,
    pub text: String,
}

impl fmt::Display for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.attrs;
        let mut tags = Vec::new();
        if a.fg != Color::Default {
            tags.push(format!("fg={:?}", a.fg));
        }
        if a.bg != Color::Default {
            tags.push(format!("bg={:?}", a.bg));
        }
        for (on, name) in [
            (a.bold, "bold"),
            (a.dim, "dim"),
            (a.strike, "strikethrough"),
            (a.italic, "italic"),
            (a.underline, "ul"),
            (a.inverse, "inv"),
        ] {
            if on {
                tags.push(name.to_owned());
            }
        }
        write!(f, "[{}]{:?}", tags.join(","), self.text)
    }
}

/// One line's runs: escapes other than SGR are dropped, blank cells keep
/// only what shows, equal neighbours merge, trailing plain blanks go.
pub fn runs(line: &str) -> Vec<Run> {
    runs_from(line, &mut Attrs::default())
}

/// `runs`, starting with `attrs` and leaving the line's final state there.
fn runs_from(line: &str, attrs: &mut Attrs) -> Vec<Run> {
    let mut cells: Vec<(Attrs, char)> = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            let shown = if c == ' ' { attrs.for_blank() } else { *attrs };
            cells.push((shown, c));
            continue;
        }
        match chars.next() {
            Some('[') => {
                let mut params = String::new();
                for p in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&p) {
                        if p == 'm' {
                            attrs.apply_sgr(&params);
                        }
                        break;
                    }
                    params.push(p);
                }
            }
            Some('(') | Some(')') => {
                chars.next();
            }
            _ => {}
        }
    }
    while cells
        .last()
        .is_some_and(|(a, c)| *c == ' ' && *a == Attrs::default())
    {
        cells.pop();
    }
    let mut out: Vec<Run> = Vec::new();
    for (attrs, c) in cells {
        match out.last_mut() {
            Some(run) if run.attrs == attrs => run.text.push(c),
            _ => out.push(Run {
                attrs,
                text: c.to_string(),
            }),
        }
    }
    out
}

/// Every line's runs, with trailing empty lines dropped. Attributes carry
/// from one line to the next: `capture-pane -e` sets them only when they
/// change, even across lines (tmuxd's lines each reset at their end).
pub fn screen_runs(lines: &[String]) -> Vec<Vec<Run>> {
    let mut attrs = Attrs::default();
    let mut out: Vec<Vec<Run>> = lines.iter().map(|l| runs_from(l, &mut attrs)).collect();
    while out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out
}

/// The first differing line, shown as runs, for a failure message.
pub fn first_difference(ours: &[Vec<Run>], tmux: &[Vec<Run>]) -> Option<String> {
    let n = ours.len().max(tmux.len());
    (0..n).find_map(|i| {
        let a = ours.get(i).map(Vec::as_slice).unwrap_or_default();
        let b = tmux.get(i).map(Vec::as_slice).unwrap_or_default();
        (a != b).then(|| {
            let show = |runs: &[Run]| runs.iter().map(Run::to_string).collect::<String>();
            format!("line {i}:\n  tmuxd: {}\n  tmux:  {}", show(a), show(b))
        })
    })
}
