// Tests for this module are being written.
