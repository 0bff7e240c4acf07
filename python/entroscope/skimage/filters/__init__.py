# SPDX-License-Identifier: MIT
"""scikit-image's ``filters`` on Entroscope: ``rank.entropy``."""

from . import rank

__all__ = ["rank"]
