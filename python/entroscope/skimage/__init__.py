# SPDX-License-Identifier: MIT
"""scikit-image's API on Entroscope's kernels: change the import, keep the call.

    from entroscope.skimage.filters.rank import entropy     # was skimage.filters.rank
    from entroscope.skimage.exposure import equalize_hist, equalize_adapthist

The functions take scikit-image 0.19's arguments and return what it returns
(dtype, shape, values), computed by `entroscope.entropy` and
`entroscope.clahe`. Where Entroscope cannot give scikit-image's exact result
the call is refused with a TypeError or ValueError that says so, never
answered differently. Arrays other than NumPy's (a CuPy array, say) are
handed to Entroscope's own functions as they are; see python/README.md.
"""

from . import exposure, filters

__all__ = ["exposure", "filters"]
