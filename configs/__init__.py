"""Shipped configs, installed as package data (``golden_distill.configs``); no code lives here.

This file makes the folder a regular package so ``importlib.resources`` finds the YAML files the
same way in an editable checkout and in an installed wheel (see datasets/shipped_configs.py).
"""
