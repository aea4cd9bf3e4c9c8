"""Image (glance) errors, in glance's words."""

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


class InvalidImageObject(ImageBadRequest):
    """A request body that glance's image schema refuses."""

    template = "Provided object does not match schema 'image': {reason}"


class InvalidVisibilityFilter(ImageBadRequest):
    template = "Invalid visibility value: {visibility}"


class ImageForbidden(ImageError):
    status = 403
    template = "{reason}"


class PolicyForbidden(ImageForbidden):
    template = "You are not authorized to complete {action} action."


class ProtectedImageDelete(ImageForbidden):
    template = "Image {image_id} is protected and cannot be deleted."


class ReadOnlyAttribute(ImageForbidden):
    template = "Attribute '{attribute}' is read-only."


class ReservedAttribute(ImageForbidden):
    template = "Attribute '{attribute}' is reserved."


class ImageConflict(ImageError):
    status = 409
    template = "{reason}"
