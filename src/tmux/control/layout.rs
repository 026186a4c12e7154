//! tmux's window layout strings (`%layout-change`, `#{window_layout}`):
//! `CSUM,WxH,X,Y` followed by `,PANE` for a pane, `{...}` for cells side by
//! side, or `[...]` for cells stacked top to bottom. Parsed into a tree and
//! flattened into pane rectangles for composing a window's screen.

use super::ids::PaneId;
use crate::tmux::PaneRect;

/// One cell of a layout: where it is and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutCell {
    pub rect: PaneRect,
    pub content: CellContent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CellContent {
    Pane(PaneId),
    /// `{...}`: children left to right.
    LeftRight(Vec<LayoutCell>),
    /// `[...]`: children top to bottom.
    TopBottom(Vec<LayoutCell>),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad tmux layout `{layout}` at byte {at}: {reason}")]
pub struct LayoutError {
    pub layout: String,
    pub at: usize,
    pub reason: &'static str,
}

impl LayoutCell {
    /// Every pane with its rectangle, in layout order (left to right, top to bottom).
    pub fn panes(&self) -> Vec<(PaneId, PaneRect)> {
        let mut out = Vec::new();
        self.collect_panes(&mut out);
        out
    }

    fn collect_panes(&self, out: &mut Vec<(PaneId, PaneRect)>) {
        match &self.content {
            CellContent::Pane(id) => out.push((*id, self.rect)),
            CellContent::LeftRight(cells) | CellContent::TopBottom(cells) => {
                for cell in cells {
                    cell.collect_panes(out);
                }
            }
        }
    }
}

/// Parses a whole layout string, checksum included (a mismatch means the
/// string was cut or mangled, so it is refused rather than half-used).
pub fn parse_layout(layout: &str) -> Result<LayoutCell, LayoutError> {
    let mut cursor = Cursor {
        layout,
        bytes: layout.as_bytes(),
        at: 0,
    };
    let (checksum, body) = layout
        .split_once(',')
        .filter(|(sum, _)| sum.len() == 4)
        .ok_or_else(|| cursor.error("expected a 4-digit checksum and a comma"))?;
    let expected = u16::from_str_radix(checksum, 16)
        .map_err(|_| cursor.error("checksum is not hexadecimal"))?;
    if layout_checksum(body) != expected {
        return Err(cursor.error("checksum does not match"));
    }
    cursor.at = 5;
    let cell = cursor.cell()?;
    if cursor.at != cursor.bytes.len() {
        return Err(cursor.error("trailing characters"));
    }
    Ok(cell)
}

/// tmux's `layout_checksum`: a 16-bit rotate-and-add over the body.
pub fn layout_checksum(body: &str) -> u16 {
    body.bytes().fold(0u16, |sum, byte| {
        (sum >> 1)
            .wrapping_add((sum & 1) << 15)
            .wrapping_add(u16::from(byte))
    })
}

struct Cursor<'a> {
    layout: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn error(&self, reason: &'static str) -> LayoutError {
        LayoutError {
            layout: self.layout.to_owned(),
            at: self.at,
            reason,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8, reason: &'static str) -> Result<(), LayoutError> {
        if self.peek() != Some(byte) {
            return Err(self.error(reason));
        }
        self.at += 1;
        Ok(())
    }

    fn number<T: std::str::FromStr>(&mut self) -> Result<T, LayoutError> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.layout[start..self.at]
            .parse()
            .map_err(|_| self.error("expected a number"))
    }

    /// `WxH,X,Y` then `,ID`, `{cells}` or `[cells]`.
    fn cell(&mut self) -> Result<LayoutCell, LayoutError> {
        let cols = self.number()?;
        self.expect(b'x', "expected `x` between width and height")?;
        let rows = self.number()?;
        self.expect(b',', "expected `,` after the size")?;
        let left = self.number()?;
        self.expect(b',', "expected `,` after the left offset")?;
        let top = self.number()?;
        let rect = PaneRect {
            left,
            top,
            cols,
            rows,
        };
        let content = match self.peek() {
            Some(b',') if self.bytes.get(self.at + 1).is_some_and(u8::is_ascii_digit) => {
                self.at += 1;
                CellContent::Pane(PaneId(self.number()?))
            }
            Some(b'{') => CellContent::LeftRight(self.children(b'}')?),
            Some(b'[') => CellContent::TopBottom(self.children(b']')?),
            _ => return Err(self.error("expected `,PANE`, `{` or `[`")),
        };
        Ok(LayoutCell { rect, content })
    }

    fn children(&mut self, close: u8) -> Result<Vec<LayoutCell>, LayoutError> {
        self.at += 1;
        let mut cells = vec![self.cell()?];
        loop {
            match self.peek() {
                Some(b',') => {
                    self.at += 1;
                    cells.push(self.cell()?);
                }
                Some(b) if b == close => {
                    self.at += 1;
                    return Ok(cells);
                }
                _ => return Err(self.error("expected `,` or the closing bracket")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(left: u16, top: u16, cols: u16, rows: u16) -> PaneRect {
        PaneRect {
            left,
            top,
            cols,
            rows,
        }
    }

    /// Layouts captured from tmux 3.3a with `list-panes` as the oracle.
    #[test]
    fn real_layouts_flatten_to_what_list_panes_reports() {
        let table: Vec<(&str, Vec<(u32, PaneRect)>)> = vec![
            ("aca1,200x50,0,0,4", vec![(4, rect(0, 0, 200, 50))]),
            (
                "0b87,200x50,0,0{100x50,0,0[100x25,0,0,0,100x24,0,26,3],99x50,101,0[99x25,101,0,1,99x24,101,26,2]}",
                vec![
                    (0, rect(0, 0, 100, 25)),
                    (3, rect(0, 26, 100, 24)),
                    (1, rect(101, 0, 99, 25)),
                    (2, rect(101, 26, 99, 24)),
                ],
            ),
            (
                "9f58,200x50,0,0{100x50,0,0,5,49x50,101,0,6,49x50,151,0,7}",
                vec![
                    (5, rect(0, 0, 100, 50)),
                    (6, rect(101, 0, 49, 50)),
                    (7, rect(151, 0, 49, 50)),
                ],
            ),
            // The visible layout of the same window with %7 zoomed.
            ("aca4,200x50,0,0,7", vec![(7, rect(0, 0, 200, 50))]),
            (
                "4196,80x24,0,0[80x12,0,0,0,80x11,0,13,2]",
                vec![(0, rect(0, 0, 80, 12)), (2, rect(0, 13, 80, 11))],
            ),
            (
                "8205,80x24,0,0{40x24,0,0,0,39x24,41,0,1}",
                vec![(0, rect(0, 0, 40, 24)), (1, rect(41, 0, 39, 24))],
            ),
        ];
        for (layout, want) in table {
            let cell = parse_layout(layout).unwrap_or_else(|e| panic!("{e}"));
            let want: Vec<_> = want.into_iter().map(|(id, r)| (PaneId(id), r)).collect();
            assert_eq!(cell.panes(), want, "{layout}");
        }
    }

    #[test]
    fn tree_shape() {
        let cell = parse_layout("8205,80x24,0,0{40x24,0,0,0,39x24,41,0,1}").unwrap();
        assert_eq!(cell.rect, rect(0, 0, 80, 24));
        let CellContent::LeftRight(children) = cell.content else {
            panic!("expected a left-right split");
        };
        assert_eq!(children[1].content, CellContent::Pane(PaneId(1)));
    }

    #[test]
    fn malformed_layouts_are_refused() {
        for bad in ["", "aca1", "aca2,200x50,0,0,4", "zzzz,200x50,0,0,4"] {
            assert!(parse_layout(bad).is_err(), "{bad:?}");
        }
        let err = parse_layout("aca2,200x50,0,0,4").unwrap_err();
        assert_eq!(err.reason, "checksum does not match");
        // Bodies with a correct checksum, so the structure is what fails.
        for body in [
            "200x50,0,0,4,",
            "200x50,0,0",
            "200x50,0,0,",
            "200x,0,0,4",
            "80x24,0,0{40x24,0,0,0,39x24,41,0,1",
            "80x24,0,0{40x24,0,0,0;39x24,41,0,1}",
            "80x24,0,0{40x24,0,0,0,39x24,41,0,1]",
            "80x24,0,0[]",
            "80x24,0,0,99999999999",
        ] {
            let layout = format!("{:04x},{body}", layout_checksum(body));
            assert!(parse_layout(&layout).is_err(), "{layout:?}");
        }
    }

    #[test]
    fn checksum_matches_tmux() {
        assert_eq!(layout_checksum("200x50,0,0,4"), 0xaca1);
        assert_eq!(
            layout_checksum("80x24,0,0{40x24,0,0,0,39x24,41,0,1}"),
            0x8205
        );
    }
}
