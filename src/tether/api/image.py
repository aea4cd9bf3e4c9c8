"""Glance's API (/image/v2)."""

from fastapi import APIRouter

router = APIRouter(prefix="/image/v2", tags=["image"])
