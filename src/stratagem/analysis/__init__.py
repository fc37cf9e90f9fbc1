"""Metrics, tables and reports: functions of stored episodes, recomputable on anyone's data."""
