"""The profile language: typed, strict, frozen models and parsed texts.

The package re-exports nothing: import each name from the module that defines it
(``from pipeline.model.profile import Profile``). :mod:`pipeline.model.text` and
:mod:`pipeline.model.render_plan` define no pydantic model, so loading a render plan (the
cold start of ``pipeline render``) does not pay for defining the profile's classes.
"""
