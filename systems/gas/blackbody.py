"""The colour of blackbody light: a Planck spectrum at each temperature integrated against the
CIE 1931 colour matching functions (the multi-lobe Gaussian fit of Wyman, Sloan and Shirley
2013), converted to linear sRGB and scaled so that its largest channel is 1. The gas's volume
pass (shaders/gas/volume.wgsl) interpolates the table; its brightness comes from the
temperature there."""

from __future__ import annotations

import numpy as np

XYZ_TO_SRGB = np.array([[3.2406, -1.5372, -0.4986],
                        [-0.9689, 1.8758, 0.0415],
                        [0.0557, -0.2040, 1.0570]])
H, C, K = 6.62607015e-34, 2.99792458e8, 1.380649e-23   # Planck, light speed, Boltzmann (SI)


def _lobe(wavelength: np.ndarray, mean: float, below: float, above: float) -> np.ndarray:
    sigma = np.where(wavelength < mean, below, above)
    return np.exp(-0.5 * ((wavelength - mean) / sigma) ** 2)


def matching_functions(nm: np.ndarray) -> np.ndarray:
    """(len(nm), 3): x-bar, y-bar, z-bar at wavelengths ``nm`` (Wyman et al. 2013, multi-lobe)."""
    x = (1.056 * _lobe(nm, 599.8, 37.9, 31.0) + 0.362 * _lobe(nm, 442.0, 16.0, 26.7)
         - 0.065 * _lobe(nm, 501.1, 20.4, 26.2))
    y = 0.821 * _lobe(nm, 568.8, 46.9, 40.5) + 0.286 * _lobe(nm, 530.9, 16.3, 31.1)
    z = 1.217 * _lobe(nm, 437.0, 11.8, 36.0) + 0.681 * _lobe(nm, 459.0, 26.0, 13.8)
    return np.stack([x, y, z], -1)


def blackbody_rgb(kelvin: float) -> np.ndarray:
    """Linear sRGB of blackbody light at ``kelvin``, largest channel 1 (negative channels of
    colours outside sRGB's gamut clipped to 0)."""
    nm = np.arange(380.0, 781.0, 1.0)
    metres = nm * 1e-9
    planck = 2.0 * H * C ** 2 / metres ** 5 / np.expm1(H * C / (metres * K * kelvin))
    xyz = planck @ matching_functions(nm)
    rgb = np.maximum(XYZ_TO_SRGB @ xyz, 0.0)
    return rgb / rgb.max()


def table(start: float, step: float, stop: float) -> np.ndarray:
    """(entries, 4) float32: blackbody_rgb from ``start`` to ``stop`` kelvin, ``step`` apart
    (w = 0)."""
    kelvins = np.arange(start, stop + step / 2, step)
    out = np.zeros((len(kelvins), 4), np.float32)
    out[:, :3] = [blackbody_rgb(k) for k in kelvins]
    return out
