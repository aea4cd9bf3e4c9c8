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


class InvalidImageStatusTransition(ImageConflict):
    template = "Image status transition from {before} to {after} is not allowed"


class ImageGone(ImageError):
    """The image was deleted while its data was on the way in."""

    status = 410
    template = ("Image {image_id} could not be found after upload. The image may have been deleted during the "
                "upload, cleaning up the chunks uploaded.")


class ImageUnsupportedMediaType(ImageError):
    status = 415
    template = "{reason}"


class RangeNotSatisfiable(ImageError):
    status = 416
    template = "Requested range not satisfiable"


class MemberNotFound(ImageError):
    status = 404
    template = "{member_id} not found in the member list of the image {image_id}."


class MemberConflict(ImageConflict):
    template = "Member {member_id} is duplicated for image {image_id}"


class MetadefNotFound(ImageNotFound):
    template = "{reason}"


class MetadefConflict(ImageConflict):
    template = "{reason}"
