//! One table of observe's text views: a layer's (or the top processes')
//! header and rows in one sample, shared by `view` and `top_view`.
//!
//! Not for: building the rows (each view does).

/// One layer's table in one sample.
pub struct LayerTable {
    pub layer: String,
    pub header: String,
    pub rows: Vec<String>,
    /// Whether anything moved (a non-zero rate).
    pub active: bool,
}
