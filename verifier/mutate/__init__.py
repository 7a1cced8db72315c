"""Mutation testing of a spec: which drifts do its SAUs catch?"""
