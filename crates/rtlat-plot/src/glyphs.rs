//! The bitmap backend with text drawn right: plotters' own ab_glyph text
//! drawing places each glyph at the pen position without its left side
//! bearing, so narrow glyphs (`.`, `,`, `1`) sit too far left and the
//! spaces after them look doubled. [`GlyphBitmap`] wraps the
//! [`BitMapBackend`] and draws text itself with the bundled font (glyphs
//! positioned at the exact, fractional pen position, kerned), keeping
//! plotters' layout box, anchors and rotation; everything else goes to the
//! wrapped backend.

use ab_glyph::{Font, FontRef, ScaleFont, point};
use plotters::prelude::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// A [`BitMapBackend`] whose text is drawn with `font`.
pub struct GlyphBitmap<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl std::fmt::Debug for GlyphBitmap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlyphBitmap")
            .field("size", &self.inner.get_size())
            .finish_non_exhaustive()
    }
}

impl<'a> GlyphBitmap<'a> {
    /// Wraps `inner`; `None` if `font` is not a font.
    pub fn new(inner: BitMapBackend<'a>, font: &'static [u8]) -> Option<GlyphBitmap<'a>> {
        Some(GlyphBitmap {
            inner,
            font: FontRef::try_from_slice(font).ok()?,
        })
    }
}

type Error<'a> = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

impl<'a> DrawingBackend for GlyphBitmap<'a> {
    type ErrorType = Error<'a>;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // plotters' layout box (which placed the text) and anchor rules.
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.inner.get_size();
        let size = style.size() as f32;
        let font = self.font.as_scaled(size);
        let mut pixels = Vec::new();
        let mut pen = 0.0_f32;
        let mut prev = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = prev {
                pen += font.kern(p, id);
            }
            prev = Some(id);
            let glyph = id.with_scale_and_position(font.scale(), point(pen, 0.0));
            pen += font.h_advance(id);
            let Some(outline) = font.outline_glyph(glyph) else {
                continue;
            };
            let bounds = outline.px_bounds();
            // The baseline half a size down, as plotters puts it.
            let left = bounds.min.x.floor() as i32;
            let top = (size / 2.0 + bounds.min.y).floor() as i32;
            outline.draw(|x, y, coverage| pixels.push((left + x as i32, top + y as i32, coverage)));
        }
        for (x, y, coverage) in pixels {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && y >= 0 && (x as u32) < w && (y as u32) < h {
                self.inner
                    .draw_pixel((x, y), color.mix(f64::from(coverage)))?;
            }
        }
        Ok(())
    }
}
