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
    /// 0 for none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed.
    pub underline: u8,
    /// The underline colour (`58`).
    pub us: Color,
    pub inverse: bool,
    pub blink: bool,
    pub hidden: bool,
    pub overline: bool,
}

impl Attrs {
    /// What a blank cell shows: only what paints its background.
    fn for_blank(self) -> Attrs {
        Attrs {
            bg: self.bg,
            underline: self.underline,
            us: if self.underline > 0 {
                self.us
            } else {
                Color::Default
            },
            inverse: self.inverse,
            strike: self.strike,
            overline: self.overline,
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
            // tmux's capture writes codes above 9 as `d:d` (`4:3`, and
            // overline, 53, as `5:3`).
            .map(|p| if p == "5:3" { "53" } else { p })
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
                // `4:n` is an underline style, `4:0` none.
                4 => self.underline = param.get(1).map_or(1, |s| *s as u8),
                5 | 6 => self.blink = true,
                7 => self.inverse = true,
                8 => self.hidden = true,
                9 => self.strike = true,
                21 => self.underline = 2,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = 0,
                25 => self.blink = false,
                27 => self.inverse = false,
                28 => self.hidden = false,
                29 => self.strike = false,
                53 => self.overline = true,
                55 => self.overline = false,
                59 => self.us = Color::Default,
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
                        _ => self.us = color,
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
        if a.us != Color::Default {
            tags.push(format!("us={:?}", a.us));
        }
        if a.underline > 1 {
            tags.push(format!("ul={}", a.underline));
        }
        for (on, name) in [
            (a.bold, "bold"),
            (a.dim, "dim"),
            (a.strike, "strikethrough"),
            (a.italic, "italic"),
            (a.underline == 1, "ul"),
            (a.inverse, "inv"),
            (a.blink, "blink"),
            (a.hidden, "hidden"),
            (a.overline, "overline"),
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
    runs_from(line, &mut (Attrs::default(), false))
}

/// The DEC line-drawing set as tmux's clients draw it: `capture-pane -e`
/// writes such cells between shift out and shift in.
fn line_drawing(c: char) -> char {
    const FROM: &str = "`afghijklmnopqrstuvwxyz{|}~";
    const TO: &str = "◆▒°±░#┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    FROM.chars()
        .position(|f| f == c)
        .and_then(|at| TO.chars().nth(at))
        .unwrap_or(c)
}

/// `runs`, starting with `state` (attributes, line drawing shifted out)
/// and leaving the line's final state there.
fn runs_from(line: &str, state: &mut (Attrs, bool)) -> Vec<Run> {
    let (attrs, drawing) = state;
    let mut cells: Vec<(Attrs, char)> = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x0e' || c == '\x0f' {
            *drawing = c == '\x0e';
            continue;
        }
        if c != '\x1b' {
            let c = if *drawing { line_drawing(c) } else { c };
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
    let mut state = (Attrs::default(), false);
    let mut out: Vec<Vec<Run>> = lines.iter().map(|l| runs_from(l, &mut state)).collect();
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
