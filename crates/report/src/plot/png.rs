//! The SVG rasterised to PNG ([`svg_to_png`]) with the embedded font, and the file format of a
//! plot path ([`PlotFormat`]).

use super::{pe, PlotError, PNG_SCALE};

/// DejaVu Sans (Bitstream Vera licence, permissive; see `assets/README.md`), embedded so the PNG
/// renders text the same on every machine.
static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Rasterises an SVG (as [`render_svg`](super::render_svg) writes it) to a PNG at [`PNG_SCALE`], with the embedded
/// DejaVu Sans for text.
///
/// # Errors
/// A [`PlotError`] if the SVG does not parse or the PNG cannot be encoded.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, PlotError> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options {
        font_family: "DejaVu Sans".into(),
        ..usvg::Options::default()
    };
    {
        let db = opt.fontdb_mut();
        db.load_font_data(DEJAVU_SANS.to_vec());
        db.set_sans_serif_family("DejaVu Sans");
    }
    let tree = usvg::Tree::from_str(svg, &opt).map_err(pe)?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * PNG_SCALE).ceil() as u32,
        (size.height() * PNG_SCALE).ceil() as u32,
    );
    let mut pixmap = tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| PlotError(format!("cannot allocate a {w}×{h} image")))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(pe)
}

/// The plot file format, from the path's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotFormat {
    /// `.svg`
    Svg,
    /// `.png`
    Png,
}

impl PlotFormat {
    /// `.svg` or `.png` (case-insensitive), else `None`.
    pub fn from_path(path: &std::path::Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "svg" => Some(PlotFormat::Svg),
            "png" => Some(PlotFormat::Png),
            _ => None,
        }
    }
}
