"""Image (glance v2): one module per kind of operation; ``ImageService`` assembles them."""

from tether.services.image.service import ImageService

__all__ = ["ImageService"]
