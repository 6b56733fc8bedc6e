//! The activations a dense layer's epilogue applies after its bias, by transformers' names.

use super::Kernels;

/// An activation after a dense layer's bias, by its transformers name (`hidden_act`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `x · (1 + erf(x/√2)) / 2` (`gelu`).
    Gelu,
    /// `x · (1 + tanh(√(2/π) · (x + 0.044715 x³))) / 2` (`gelu_pytorch_tanh`, `gelu_new`).
    GeluTanh,
    /// `x · sigmoid(1.702 x)` (`quick_gelu`, CLIP's).
    QuickGelu,
}

impl Activation {
    /// The activation `hidden_act` names, `None` for one not implemented.
    pub fn named(name: &str) -> Option<Activation> {
        match name {
            "gelu" => Some(Activation::Gelu),
            "gelu_pytorch_tanh" | "gelu_new" => Some(Activation::GeluTanh),
            "quick_gelu" => Some(Activation::QuickGelu),
            _ => None,
        }
    }

    /// `x = activation(x + bias)` in place.
    pub fn apply(self, kernels: &Kernels, x: &mut [f32], bias: &[f32]) {
        match self {
            Activation::Gelu => kernels.bias_gelu(x, bias),
            Activation::GeluTanh => kernels.bias_gelu_tanh(x, bias),
            Activation::QuickGelu => kernels.bias_quick_gelu(x, bias),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Activation;

    #[test]
    fn activations_match_their_f64_forms() {
        let portable = crate::kernels::Kernels::portable();
        let native = crate::kernels::Kernels::for_class(None).unwrap();
        let xs: Vec<f32> = (-800..=800).map(|i| i as f32 / 100.0).chain([-120.0, -60.0, 60.0, 120.0]).collect();
        let bias = vec![0.25; xs.len()];
        type Form = fn(f64) -> f64;
        let forms: [(Activation, Form); 2] = [
            (Activation::QuickGelu, |x| x / (1.0 + (-1.702 * x).exp())),
            (Activation::GeluTanh, |x| {
                0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
            }),
        ];
        for (activation, form) in forms {
            for kernels in [&portable, &native] {
                let mut got = xs.clone();
                activation.apply(kernels, &mut got, &bias);
                for (x, g) in xs.iter().zip(&got) {
                    let want = form(*x as f64 + 0.25);
                    let close = (*g as f64 - want).abs() < 2e-6 * want.abs().max(1.0);
                    assert!(close, "{activation:?}({x}) on {kernels:?}: {g} vs {want}");
                }
            }
        }
        assert_eq!(Activation::named("gelu_pytorch_tanh"), Some(Activation::GeluTanh));
        assert_eq!(Activation::named("quick_gelu"), Some(Activation::QuickGelu));
        assert_eq!(Activation::named("relu"), None);
    }
}
