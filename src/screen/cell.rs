//! What one cell of a pane holds, as tmux 3.3 keeps it: text (a grapheme,
//! or the padding half of a wide one), colours, attributes, underline style
//! and colour.

/// tmux's `UTF8_SIZE`: the most bytes one cell's text may take.
const CELL_BYTES: usize = 21;

/// A colour as a program set it. tmux keeps `31` and `38;5;1` apart, but
/// both show the same, so one value stands for both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Color {
    #[default]
    Default,
    Idx(u8),
    Rgb(u8, u8, u8),
}

/// tmux's underline styles (`4`, `21` or `4:2`, `4:3` ... `4:5`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Underline {
    #[default]
    None,
    Single,
    Double,
    Curly,
    Dotted,
    Dashed,
}

/// Attribute bits, each one tmux keeps on its own (bold and dim together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Attrs(u16);

impl Attrs {
    pub const BOLD: Attrs = Attrs(1);
    pub const DIM: Attrs = Attrs(1 << 1);
    pub const ITALIC: Attrs = Attrs(1 << 2);
    pub const BLINK: Attrs = Attrs(1 << 3);
    pub const REVERSE: Attrs = Attrs(1 << 4);
    pub const HIDDEN: Attrs = Attrs(1 << 5);
    pub const STRIKETHROUGH: Attrs = Attrs(1 << 6);
    pub const OVERLINE: Attrs = Attrs(1 << 7);
    /// Drawn from the DEC line-drawing set (`ESC ( 0` or shift out).
    pub const CHARSET: Attrs = Attrs(1 << 8);

    pub fn contains(self, other: Attrs) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn insert(&mut self, other: Attrs) {
        self.0 |= other.0;
    }

    pub fn remove(&mut self, other: Attrs) {
        self.0 &= !other.0;
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// How text is drawn: what SGR sets, and what every written cell takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pen {
    pub fg: Color,
    pub bg: Color,
    /// The underline colour (`58:...`).
    pub us: Color,
    pub attrs: Attrs,
    pub underline: Underline,
}

impl Pen {
    /// What a reader sees of the pen: the character set is already in the
    /// cell's text.
    pub fn shown(mut self) -> Pen {
        self.attrs.remove(Attrs::CHARSET);
        self
    }

    /// The pen of a cell an erase leaves: tmux keeps only the background.
    pub fn erased(bg: Color) -> Pen {
        Pen {
            bg,
            ..Pen::default()
        }
    }
}

/// One cell. A wide character takes its cell and padding cells after it
/// (`width == 0`), as in tmux's grid, so an erase or overwrite that cuts
/// one in half leaves what tmux leaves.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Cell {
    ch: char,
    /// The whole grapheme when combining marks or joiners followed `ch`.
    /// Behind a thin pointer (8 bytes, where a `Box<str>` takes 16), so the
    /// many cells without one stay small: every session keeps its screens,
    /// and at 1,000 sessions the cells are most of tmuxd's memory.
    cluster: Option<Box<Cluster>>,
    pub pen: Pen,
    width: u8,
}

/// A grapheme of more than one character (see `Cell::combine`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Cluster(Box<str>);

impl Default for Cell {
    fn default() -> Self {
        Cell::blank(Color::Default)
    }
}

impl Cell {
    /// An erased cell with background `bg`.
    pub fn blank(bg: Color) -> Cell {
        Cell {
            ch: ' ',
            cluster: None,
            pen: Pen::erased(bg),
            width: 1,
        }
    }

    pub fn new(ch: char, width: u8, pen: Pen) -> Cell {
        Cell {
            ch,
            cluster: None,
            pen,
            width,
        }
    }

    /// The second (or later) column of a wide character.
    pub fn padding() -> Cell {
        Cell {
            ch: ' ',
            cluster: None,
            pen: Pen::default(),
            width: 0,
        }
    }

    pub fn is_padding(&self) -> bool {
        self.width == 0
    }

    /// Columns this cell's character takes (0 for padding).
    pub fn width(&self) -> u8 {
        self.width
    }

    /// Appends the text the cell shows to `out`, line-drawing characters
    /// translated as a client terminal draws them.
    pub fn push_text(&self, out: &mut String) {
        match &self.cluster {
            Some(cluster) if self.pen.attrs.contains(Attrs::CHARSET) => {
                let mut chars = cluster.0.chars();
                out.extend(chars.next().map(line_drawing));
                out.push_str(chars.as_str());
            }
            Some(cluster) => out.push_str(&cluster.0),
            None if self.pen.attrs.contains(Attrs::CHARSET) => out.push(line_drawing(self.ch)),
            None => out.push(self.ch),
        }
    }

    /// The text the cell shows, as a new string.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.push_text(&mut out);
        out
    }

    /// Appends a zero-width character (a combining mark, a joiner, or what
    /// a joiner joins) to this cell's grapheme, unless that would pass
    /// tmux's limit of 21 bytes a cell (then tmux drops the character).
    pub fn combine(&mut self, ch: char) -> bool {
        let mut text = match self.cluster.take() {
            Some(text) => text.0.into_string(),
            None => self.ch.to_string(),
        };
        let fits = text.len() + ch.len_utf8() <= CELL_BYTES;
        if fits {
            text.push(ch);
        }
        self.cluster = Some(Box::new(Cluster(text.into_boxed_str())));
        fits
    }

    /// True when the cell shows nothing: a blank with default colours.
    pub fn is_plain_blank(&self) -> bool {
        self.ch == ' ' && self.cluster.is_none() && self.pen.shown() == Pen::default()
    }
}

/// The DEC special graphics set as tmux's clients draw it (`tty-acs.c`).
pub(super) fn line_drawing(ch: char) -> char {
    match ch {
        '`' => '◆',
        'a' => '▒',
        'f' => '°',
        'g' => '±',
        'h' => '░',
        'i' => '#',
        'j' => '┘',
        'k' => '┐',
        'l' => '┌',
        'm' => '└',
        'n' => '┼',
        'o' => '⎺',
        'p' => '⎻',
        'q' => '─',
        'r' => '⎼',
        's' => '⎽',
        't' => '├',
        'u' => '┤',
        'v' => '┴',
        'w' => '┬',
        'x' => '│',
        'y' => '≤',
        'z' => '≥',
        '{' => 'π',
        '|' => '≠',
        '}' => '£',
        '~' => '·',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_their_text() {
        let pen = Pen::default();
        assert_eq!(Cell::new('a', 1, pen).text(), "a");
        assert_eq!(Cell::new('你', 2, pen).text(), "你");
        let mut e = Cell::new('e', 1, pen);
        e.combine('\u{301}');
        assert_eq!(e.text(), "e\u{301}");
        let drawn = Pen {
            attrs: Attrs::CHARSET,
            ..pen
        };
        assert_eq!(Cell::new('q', 1, drawn).text(), "─");
        assert!(Cell::blank(Color::Default).is_plain_blank());
        assert!(!Cell::blank(Color::Idx(1)).is_plain_blank());
        assert!(Cell::padding().is_padding());
    }

    /// Every session keeps its screens: at 1,000 sessions of 80x24 the
    /// cells are most of the daemon's memory (40 bytes a cell before the
    /// cluster was boxed twice over).
    #[test]
    fn a_cell_takes_at_most_32_bytes() {
        assert!(
            std::mem::size_of::<Cell>() <= 32,
            "{}",
            std::mem::size_of::<Cell>()
        );
    }

    #[test]
    fn attributes_are_independent_bits() {
        let mut attrs = Attrs::default();
        attrs.insert(Attrs::BOLD);
        attrs.insert(Attrs::DIM);
        assert!(attrs.contains(Attrs::BOLD) && attrs.contains(Attrs::DIM));
        attrs.remove(Attrs::BOLD);
        assert!(!attrs.contains(Attrs::BOLD) && attrs.contains(Attrs::DIM));
    }
}
