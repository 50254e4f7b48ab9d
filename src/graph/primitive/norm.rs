//! A norm primitive's flags, as its kernels on both devices and its reverse rule read them.

use super::Primitive;

/// `fast.layerNorm`'s or `rmsNorm`'s flags: whether it is RMS, which affine rows it has (its
/// inputs after `x`, weight then bias), and its epsilon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NormKind {
    pub rms: bool,
    pub weight: bool,
    pub bias: bool,
    pub eps: f32,
}

impl NormKind {
    /// The flags of `primitive`, if it is a norm.
    pub fn of(primitive: &Primitive) -> Option<NormKind> {
        match *primitive {
            Primitive::Norm {
                rms,
                weight,
                bias,
                eps,
            } => Some(NormKind {
                rms,
                weight,
                bias,
                eps: f32::from_bits(eps),
            }),
            _ => None,
        }
    }
}
