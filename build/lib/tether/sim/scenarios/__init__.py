"""The scenario library: each seed's race, reproduced exactly, on the real services."""
