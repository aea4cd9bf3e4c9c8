"""Image (glance) errors."""

from __future__ import annotations

from tether.domain.errors import TetherError


class ImageError(TetherError):
    service = "image"
    status = 500


class ImageNotFound(ImageError):
    status = 404
    template = "No image found with ID {image_id}"


class ImageBadRequest(ImageError):
    status = 400
    template = "{reason}"


class ImageConflict(ImageError):
    status = 409
    template = "{reason}"
