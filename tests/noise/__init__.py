"""Tests of recognition noise."""
